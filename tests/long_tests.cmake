# Read by ctest after the tests doctest_discover_tests found (TEST_INCLUDE_FILES, tests/CMakeLists.txt).
#
# ctest -j starts tests in descending COST. A fresh build has no cost file, and ctest's own
# (Testing/Temporary/CTestCostData.txt) keeps a name only up to its first space, so every test
# would cost 0 and start in the order declared: a two-minute test started late ran alone on
# one core at the end. These, the longest in the Release run or the sanitizers' (seconds from
# a CI run, in that order), start first, the longest first; cli_fuzz, which holds both cores
# (RUN_SERIAL), starts last (its COST is in CMakeLists.txt). A name no longer found is skipped:
# it only loses its place.
set(nwreg_long_tests
  "local polynomial: in several columns the learner never keeps a nearest-key corner a coarse grid beats"  # 132 s, 41 s
  "line sums: the Gaussian at each row's own bandwidth (knn, span) agrees with the key-by-key sums"  # 24 s, 103 s
  "line sums: Gaussian and Laplace moments agree with the key-by-key sums"  # 28 s, 67 s
  "leave-one-out and in-sample passes through the transform: as every key, for fewer pairs"  # 8 s, 73 s
  "leave-one-out passes over 2^17 keys (binned, cells): as the windows key by key"  # 41 s, 22 s
  "learning on a sample of LOO rows stays within 0.1% of a full-data descent"  # 2 s, 55 s
  "edges: the descent learns on every row of one column, and --verbose says which rows each loss is over"  # 4 s, 53 s
  "standard errors: the normal quantile, the formula by hand, and its coverage"  # 15 s, 40 s
  "adaptive bandwidths in one column: the blocks kept give the sums over every key"  # 14 s, 40 s
  "several x columns: start points descended at a looser tolerance learn what every key's sums learn"  # 6 s, 44 s
  "several x columns: the leave-one-out pass over every row makes NW's tr(H) as the in-sample pass does"  # 3 s, 42 s
  "guards: output is byte for byte the same whatever --threads, and run after run"  # 3 s, 42 s
  "hardening: --optimizer sgd keeps a bounded history"  # 3 s, 40 s
  "categorical columns: the k-d tree over the continuous columns prunes within the tolerance"  # 4 s, 37 s
  "edges: a local polynomial in two columns is held at its coefficients + 1 neighbours, and says so"  # 4 s, 37 s
  "edges: predict on 2^20 rows and more reads x in place, in x order, with the same answers"  # 10 s, 28 s
  "local polynomial: degree 2 and 3 in two columns learn a bandwidth no worse than a grid of sensible ones"  # 7 s, 30 s
  "adaptive bandwidths in several columns: the k-d tree's nodes kept give the sums over every key"  # 8 s, 25 s
  "fast Gauss transform: the sums over every key to the tolerance, at any offset"  # 15 s, 18 s
  "local linear learns a bandwidth whose LOO error is no worse than statsmodels cv_ls"  # 1 s, 25 s
  "moment line: wide windows summed by moments agree with the key-by-key sums"  # 1 s, 21 s
)
set(nwreg_cost 1000)
foreach(name IN LISTS nwreg_long_tests)
  list(FIND nwreg_tests_TESTS "${name}" found)
  if(found GREATER -1)
    set_tests_properties("${name}" PROPERTIES COST ${nwreg_cost})
  endif()
  math(EXPR nwreg_cost "${nwreg_cost} - 1")
endforeach()
