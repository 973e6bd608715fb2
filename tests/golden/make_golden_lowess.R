# Golden values for lowess at every span with gross errors (issue "Honest at the edges"): 40
# rows, six gross errors in runs, R's lowess(x, y, f, iter, delta = 0) for f = k/40, k = 2..40,
# and iter 0 to 5. Where a window's robustness weights are all 0, clowess answers a row with its
# own y; where the weighted x spread of a window is at most 0.001 of the x range, with a constant.
# Run from the repository root: Rscript tests/golden/make_golden_lowess.R
# Writes tests/golden/lowess_small.csv: f, iter, x, y, fitted.
set.seed(20261127)
n <- 40
x <- sort(runif(n, 0, 10))
y <- sin(x) + rnorm(n, 0, 0.2)
bad <- c(5, 6, 7, 20, 21, 33)
y[bad] <- y[bad] + c(8, 9, 7, -6, -8, 10)
out <- NULL
for (f in (2:n) / n) for (it in 0:5) {
  l <- lowess(x, y, f = f, iter = it, delta = 0)
  out <- rbind(out, data.frame(f = f, iter = it, x = x, y = y, fitted = l$y))
}
write.csv(format(out, digits = 17), "tests/golden/lowess_small.csv", row.names = FALSE, quote = FALSE)
