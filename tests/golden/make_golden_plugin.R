#!/usr/bin/Rscript
# Golden values for --bandwidth plugin: R KernSmooth's dpill (Debian r-cran-kernsmooth, defaults)
# on every bundled data set's natural x/y pairs and on simulated sets written beside them.
# dpill fits raw powers of x by QR, which loses digits when x is far from 0 against its spread
# (LakeHuron's years: centring x first moves its answer by 7e-7 relative); dpill is unchanged by
# a shift of x in exact arithmetic, so the file records both: `dpill` on x as given and
# `dpill_centred` on x minus its mean. "NA" marks a set where dpill returns NA or an error.
# Run from the repository root:
#     Rscript tests/golden/make_golden_plugin.R
# Writes tests/golden/plugin_sim.csv (the simulated sets) and tests/golden/plugin.csv.
suppressMessages(library(KernSmooth))
set.seed(20261122)
sim <- list()
add <- function(name, x, y) sim[[length(sim) + 1]] <<- data.frame(set = name, x = x, y = y)
x <- runif(50); add("sin50", x, sin(2 * pi * x) + rnorm(50, sd = 0.3))
x <- round(runif(500, 0, 10), 1); add("ties500", x, sqrt(x) + rnorm(500, sd = 0.2))
x <- sort(rnorm(2000)); add("bumps2000", x, x + 2 * exp(-16 * x^2) + rnorm(2000, sd = 0.4))
x <- seq(0, 1, length.out = 300); add("even300", x, x^3 + rnorm(300, sd = 0.05))
# Two clusters far apart: dpill's binned pilot fits are singular in the gap (NA).
x <- c(runif(100, 0, 1), runif(100, 9, 10)); add("clusters200", x, sin(x) + rnorm(200, sd = 0.1))
sim <- do.call(rbind, sim)
write.csv(sim, "tests/golden/plugin_sim.csv", row.names = FALSE, quote = FALSE)

h <- function(x, y) tryCatch(dpill(x, y), error = function(e) NA_real_)
rows <- list()
golden <- function(set, file, xcol, ycol, x, y) {
  rows[[length(rows) + 1]] <<- data.frame(set = set, file = file, x = xcol, y = ycol,
                                          dpill = sprintf("%.17g", h(x, y)),
                                          dpill_centred = sprintf("%.17g", h(x - mean(x), y)))
}
pairs <- list(c("mcycle", "times", "accel"), c("faithful", "eruptions", "waiting"),
              c("faithful", "waiting", "eruptions"), c("synthetic", "x", "y"),
              c("lakehuron", "year", "level"), c("boston", "lstat", "medv"), c("boston", "rm", "medv"),
              c("airquality", "Solar.R", "Ozone"), c("airquality", "Wind", "Ozone"),
              c("airquality", "Temp", "Ozone"), c("gagurine", "Age", "GAG"))
for (p in pairs) {
  file <- paste0("data/", p[1], ".csv")
  d <- read.csv(file)
  golden(p[1], file, p[2], p[3], d[[p[2]]], d[[p[3]]])
}
for (s in unique(sim$set)) {
  d <- sim[sim$set == s, ]
  golden(s, "tests/golden/plugin_sim.csv", "x", "y", d$x, d$y)
}
out <- do.call(rbind, rows)
out$dpill[out$dpill == "NA"] <- "none"
out$dpill_centred[out$dpill_centred == "NA"] <- "none"
write.csv(out, "tests/golden/plugin.csv", row.names = FALSE, quote = FALSE)
