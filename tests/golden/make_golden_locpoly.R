# KernSmooth's locpoly (binned local polynomials, Gaussian kernel) on data/mcycle.csv, for the
# comparison with --method local-polynomial: degrees 1 to 3 and their first derivatives at
# bandwidth 2 on 401 grid points over the range of times. Needs Debian's r-cran-kernsmooth.
# Run from the repository root: Rscript tests/golden/make_golden_locpoly.R
library(KernSmooth)
d <- read.csv("data/mcycle.csv")
out <- NULL
for (degree in 1:3) {
  f <- locpoly(d$times, d$accel, degree = degree, bandwidth = 2, gridsize = 401)
  s <- locpoly(d$times, d$accel, drv = 1, degree = degree, bandwidth = 2, gridsize = 401)
  out <- rbind(out, data.frame(degree = degree, x = f$x, fit = f$y, slope = s$y))
}
write.csv(out[seq(1, nrow(out), by = 8), ], "tests/golden/locpoly.csv", row.names = FALSE, quote = FALSE)
