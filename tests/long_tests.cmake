# Read by ctest after the tests doctest_discover_tests found (TEST_INCLUDE_FILES, tests/CMakeLists.txt).
#
# ctest -j starts tests in descending COST. A fresh build has no cost file, and ctest's own
# (Testing/Temporary/CTestCostData.txt) keeps a name only up to its first space, so every test
# would cost 0 and start in the order declared: a two-minute test started late ran alone on
# one core at the end. These, the tests of 10 s or more in the Release run or the sanitizers'
# (seconds on 2 cores, in that order, 2026-12-02), start first, by the two times added; cli_fuzz,
# which holds both cores (RUN_SERIAL), starts last (its COST is in CMakeLists.txt). A name no
# longer found is skipped: it only loses its place (a renamed test's entry is renamed here).
set(nwreg_long_tests
  "local polynomial: no nearest-key corner a coarse grid beats in several columns, degree 3"  # 85 s, 13 s
  "local polynomial: no nearest-key corner a coarse grid beats in several columns, degree 2"  # 42 s, 13 s
  "leave-one-out passes over 2^17 keys (binned, cells): as the windows key by key"  # 40 s, 6 s
  "edges: the descent learns on every row of one column, and --verbose says which rows each loss is over"  # 4 s, 38 s
  "guards: output is byte for byte the same whatever --threads, and run after run"  # 2 s, 38 s
  "local polynomial: no nearest-key corner a coarse grid beats in several columns, degree 1"  # 26 s, 13 s
  "edges: predict on 2^20 rows and more reads x in place, in x order, with the same answers"  # 9 s, 30 s
  "local polynomial: degree 2 and 3 in two columns learn a bandwidth no worse than a grid of sensible ones"  # 5 s, 32 s
  "several x columns: the leave-one-out pass over every row makes NW's tr(H) as the in-sample pass does"  # 2 s, 35 s
  "hardening: --optimizer sgd keeps a bounded history"  # 3 s, 33 s
  "edges: a local polynomial in two columns is held at its coefficients + 1 neighbours, and says so"  # 4 s, 29 s
  "line sums: the Gaussian at each row's own bandwidth (knn, span) agrees with the key-by-key sums"  # 23 s, 7 s
  "fast Gauss transform: the sums over every key to the tolerance, at any offset"  # 13 s, 16 s
  "adaptive bandwidths in one column: the blocks kept give the sums over every key"  # 13 s, 16 s
  "line sums: Gaussian and Laplace moments agree with the key-by-key sums"  # 17 s, 7 s
  "adaptive bandwidths in several columns: the k-d tree's nodes kept give the sums over every key"  # 8 s, 15 s
  # 1 s, 21 s
  "neighbour bandwidths with sample weights of 0: a row whose nearest key weighs 0 still sums only the keys in reach"
  "local linear learns a bandwidth whose LOO error is no worse than statsmodels cv_ls"  # 1 s, 20 s
  "standard errors: the normal quantile, the formula by hand, and its coverage"  # 15 s, 5 s
  "identical keys merged: every result as with every row its own key, for fewer pairs"  # 1 s, 17 s
  "several x columns: start points descended at a looser tolerance learn what every key's sums learn"  # 4 s, 14 s
  "categorical columns: the k-d tree over the continuous columns prunes within the tolerance"  # 4 s, 12 s
  "errors: the catalogue, one input each"  # 2 s, 14 s
  "selection cli: a series with correlated errors is flagged, leave-block-out fixes it"  # 1 s, 15 s
  "line sums: the gradients in log h match finite differences of the criteria"  # 1 s, 14 s
  "daily: progress on a terminal, none with --quiet or when stderr is not a terminal"  # 3 s, 11 s
  # 1 s, 13 s
  "several x columns: a pass over every row takes the rows the last listed pass made at the same bandwidths"
  "edges: lowess at every span and iteration answers every row as R does"  # 1 s, 11 s
  "guards: 1e7 training rows work within about 3x the raw data size in memory"  # 11 s, 0 s
)
set(nwreg_cost 1000)
foreach(name IN LISTS nwreg_long_tests)
  list(FIND nwreg_tests_TESTS "${name}" found)
  if(found GREATER -1)
    set_tests_properties("${name}" PROPERTIES COST ${nwreg_cost})
  endif()
  math(EXPR nwreg_cost "${nwreg_cost} - 1")
endforeach()
