# R's loess (surface = "direct": exact local fits, no kd-tree interpolation) and lowess on
# bundled data, for the comparison with -b span:F --kernel tricube and --robust N:
#   loess(y ~ x, span = F, degree = D, family = "gaussian", surface = "direct")
#     = nwreg predict -b span:F --kernel tricube --method nw (D = 0), local-linear (D = 1) or
#       local-polynomial --degree 2 (D = 2)
#   family = "symmetric" (4 iterations in all) = the same with --robust 3
#   lowess(x, y, f = F, iter = N, delta = 0) = -b span:F --kernel tricube --method local-linear --robust N
#   loess(..., normalize = FALSE) over two columns = -b span:F:1,1 (the columns' scales given)
# Fitted values at every training row (Boston: every fifth) and, for one x column, predictions
# at 12 points inside the range. cars and LakeHuron have tied or evenly spaced x; mcycle_w
# weights mcycle's rows by w_i = ((i - 1) %% 3 + 1) / 2, 0 for every 17th row.
# Needs Debian's r-base-core and r-cran-mass. Run from the repository root:
#   Rscript tests/golden/make_golden_loess.R
sets <- list(
  cars = list(d = read.csv("data/cars.csv"), x = "speed", y = "dist", spans = c(0.3, 0.75, 1.5)),
  lakehuron = list(d = read.csv("data/lakehuron.csv"), x = "year", y = "level", spans = c(0.2, 0.75)),
  mcycle = list(d = read.csv("data/mcycle.csv"), x = "times", y = "accel", spans = c(0.1, 0.5)),
  mcycle_w = list(d = read.csv("data/mcycle.csv"), x = "times", y = "accel", spans = c(0.3)),
  boston = list(d = read.csv("data/boston.csv"), x = c("lstat", "rm"), y = "medv", spans = c(0.1, 0.5, 1.2)),
  airquality = list(d = read.csv("data/airquality.csv"), x = c("Wind", "Temp"), y = "Ozone", spans = c(0.4, 0.9))
)
num <- function(v) sprintf("%.17g", v)
out <- list()
add <- function(set, call, degree, robust, span, x, value) {
  out[[length(out) + 1]] <<- data.frame(set = set, call = call, degree = degree, robust = robust, span = span,
                                        x = x, value = num(value))
}
for (name in names(sets)) {
  s <- sets[[name]]
  d <- s$d
  n <- nrow(d)
  w <- rep(1, n)
  if (name == "mcycle_w") w <- ifelse(seq_len(n) %% 17 == 0, 0, ((seq_len(n) - 1) %% 3 + 1) / 2)
  f <- as.formula(paste(s$y, "~", paste(s$x, collapse = " + ")))
  rows <- if (name == "boston") seq(1, n, by = 5) else seq_len(n)
  xs <- apply(as.matrix(d[rows, s$x, drop = FALSE]), 1, function(r) paste(num(r), collapse = " "))
  for (span in s$spans) for (degree in 0:2) for (family in c("gaussian", "symmetric")) {
    fit <- loess(f, d, weights = w, span = span, degree = degree, family = family, surface = "direct")
    robust <- if (family == "symmetric") 3 else 0
    add(name, "loess", degree, robust, span, xs, fitted(fit)[rows])
    if (length(s$x) == 1) {
      r <- range(d[[s$x]])
      g <- data.frame(r[1] + (r[2] - r[1]) * (seq_len(12) - 0.5) / 12)
      names(g) <- s$x
      add(name, "loess_predict", degree, robust, span, num(g[[1]]), predict(fit, g))
    }
  }
  if (length(s$x) == 2) {  # normalize = FALSE: the columns as they are (-b span:F:1,1)
    for (degree in 1:2) {
      fit <- loess(f, d, span = 0.5, degree = degree, normalize = FALSE, surface = "direct")
      add(name, "loess_unnormalized", degree, 0, 0.5, xs, fitted(fit)[rows])
    }
  }
  if (length(s$x) == 1 && name != "mcycle_w") {
    for (span in c(0.2, 2 / 3)) for (iter in c(0, 3)) {
      l <- lowess(d[[s$x]], d[[s$y]], f = span, iter = iter, delta = 0)
      add(name, "lowess", 1, iter, span, num(l$x), l$y)
    }
  }
}
write.csv(do.call(rbind, out), "tests/golden/loess.csv", row.names = FALSE, quote = FALSE)
