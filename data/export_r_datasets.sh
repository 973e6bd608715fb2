#!/bin/sh
# Writes data/mcycle.csv and data/faithful.csv from R, exactly as R's write.csv does (quoted
# header, no row names). Needs Debian's r-base-core and r-cran-mass. Run from the repository root.
set -eu
Rscript -e 'library(MASS)
write.csv(mcycle, "data/mcycle.csv", row.names = FALSE)
write.csv(faithful, "data/faithful.csv", row.names = FALSE)'
