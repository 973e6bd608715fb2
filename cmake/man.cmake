# Makes the man page: help2man over `nwreg --help` and `--version`, with each command's --help
# (options, defaults, examples) and the exit codes included as sections.
# cmake -DNWREG=path/to/nwreg -DHELP2MAN=path/to/help2man -DOUT=nwreg.1 -DWORK=dir -P man.cmake
set(include "${WORK}/nwreg.h2m")
file(WRITE "${include}" "[NAME]\nnwreg \\- Nadaraya-Watson kernel regression as attention pooling\n")
foreach(cmd fit predict)
  execute_process(COMMAND "${NWREG}" ${cmd} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nwreg ${cmd} --help failed")
  endif()
  # roff: a backslash is \e; a line starting with . or ' must not be read as a request.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  file(APPEND "${include}" "[>DESCRIPTION]\n.SS \"nwreg ${cmd}\"\n.nf\n.in 0\n${text}.fi\n.in\n")
endforeach()
file(APPEND "${include}" "[EXIT STATUS]\n.nf\n0    success\n1    data or runtime error (bad input, unusable model, output not\n     writable, or some files of a batch failed)\n2    usage error (unknown option, bad value, unknown column)\n130  interrupted by SIGINT; 143 by SIGTERM: temporary outputs removed\n.fi\n")
file(APPEND "${include}" "[SEE ALSO]\nThe README in the nwreg sources: the math, every output format, recipes.\n")
execute_process(COMMAND "${HELP2MAN}" --no-info --section 1 --include "${include}" --output "${OUT}" "${NWREG}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed")
endif()
