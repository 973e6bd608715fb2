#!/usr/bin/Rscript
# Golden p-values for `nwreg test`: R's sm.regression (Debian r-cran-sm 2.2-5.7), model = "no
# effect" and "linear", local constant (poly.index = 0) and local linear (1), normal kernel at a
# given h, on bundled data sets and on simulated ones written beside them. n <= 500 everywhere,
# so sm does not bin. Only unweighted cases: sm reads weights as counts of replicates (with
# pure-error degrees of freedom), nwreg as precisions. Every case has a positive third cumulant
# (where it is negative sm matches |k3| and nwreg its sign, and the two differ by design).
# Run from the repository root:
#     Rscript tests/golden/make_golden_test.R
# Writes tests/golden/sm_test_sim.csv (the simulated sets) and tests/golden/sm_test.csv.
suppressMessages(library(sm))
set.seed(20261126)
sim <- list()
add <- function(name, x, y) sim[[length(sim) + 1]] <<- data.frame(set = name, x = x, y = y)
x <- sort(runif(80, 0, 10)); add("weak80", x, 0.25 * sin(x) + 0.05 * x + rnorm(80))
x <- sort(runif(150)); add("flat150", x, rnorm(150, sd = 2))
x <- round(runif(200, 0, 5), 1); add("ties200", x, 0.3 * (x - 2.5)^2 / 6 + x + rnorm(200))
x <- 1.7e9 + sort(runif(60, 0, 86400)); add("stamps60", x, sin(x / 20000) * 0.4 + rnorm(60))
sim <- do.call(rbind, sim)
write.csv(sim, "tests/golden/sm_test_sim.csv", row.names = FALSE, quote = FALSE)

rows <- list()
golden <- function(set, file, xcol, ycol, x, y, h) {
  for (model in c("no effect", "linear"))
    for (degree in c(0, 1)) {
      p <- sm.regression(x, y, h = h, model = model, poly.index = degree, display = "none", verbose = 0)$p
      rows[[length(rows) + 1]] <<- data.frame(set = set, file = file, x = xcol, y = ycol, h = sprintf("%.17g", h),
                                              null = ifelse(model == "linear", "linear", "constant"),
                                              method = ifelse(degree == 0, "nw", "local-linear"),
                                              p = sprintf("%.17g", p))
    }
}
for (b in list(list("cars", "speed", "dist", 4), list("birthwt", "lwt", "bwt", 15),
               list("birthwt", "age", "bwt", 4))) {
  file <- paste0("data/", b[[1]], ".csv")
  d <- read.csv(file)
  golden(b[[1]], file, b[[2]], b[[3]], d[[b[[2]]]], d[[b[[3]]]], b[[4]])
}
for (s in list(list("weak80", 0.7), list("weak80", 2), list("flat150", 0.1), list("ties200", 0.5),
               list("stamps60", 8000))) {
  d <- sim[sim$set == s[[1]], ]
  golden(s[[1]], "tests/golden/sm_test_sim.csv", "x", "y", d$x, d$y, s[[2]])
}
write.csv(do.call(rbind, rows), "tests/golden/sm_test.csv", row.names = FALSE, quote = FALSE)
