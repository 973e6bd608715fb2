#!/bin/sh
# Writes data/mcycle.csv and data/faithful.csv from R, exactly as R's write.csv does (quoted
# header, no row names). Needs Debian's r-base-core and r-cran-mass. Run from the repository root.
set -eu
Rscript -e 'library(MASS)
write.csv(mcycle, "data/mcycle.csv", row.names = FALSE)
write.csv(faithful, "data/faithful.csv", row.names = FALSE)'
# Two multivariate sets: Boston housing (MASS), median value against lower-status share and
# rooms; New York air quality (R datasets), ozone against radiation, wind and temperature,
# complete rows only (na.omit: 111 of 153).
Rscript -e 'library(MASS)
write.csv(Boston[, c("lstat", "rm", "medv")], "data/boston.csv", row.names = FALSE)
aq <- na.omit(airquality[, c("Solar.R", "Wind", "Temp", "Ozone")])
write.csv(aq, "data/airquality.csv", row.names = FALSE)'
# A yearly series with correlated errors (R datasets): the level of Lake Huron in feet, 1875-1972.
Rscript -e 'write.csv(data.frame(year = as.numeric(time(LakeHuron)), level = as.numeric(LakeHuron)),
                      "data/lakehuron.csv", row.names = FALSE)'
# Glycosaminoglycan concentration in the urine of 314 children against age (MASS): a curve
# whose learned NW bandwidth is too small to be smooth.
Rscript -e 'library(MASS)
write.csv(GAGurine, "data/gagurine.csv", row.names = FALSE)'
# The same air quality as a daily series (R datasets): all 153 days of May to September 1973,
# the date as ISO 8601, temperature first (the default y), missing ozone readings left as NA.
Rscript -e 'aq <- data.frame(date = format(as.Date(sprintf("1973-%02d-%02d", airquality$Month, airquality$Day))),
                             Temp = airquality$Temp, Ozone = airquality$Ozone, Wind = airquality$Wind)
write.csv(aq, "data/airquality_daily.csv", row.names = FALSE)'
# Mixed data (MASS): birth weight (grams) of 189 babies against the mother's age and weight
# (lb) at her last period, her race (as words; a factor with no order), whether she smoked
# (0/1) and her number of physician visits in the first trimester (0-6, ordered).
Rscript -e 'library(MASS)
b <- birthwt
write.csv(data.frame(age = b$age, lwt = b$lwt, race = c("white", "black", "other")[b$race], smoke = b$smoke,
                     ftv = b$ftv, bwt = b$bwt), "data/birthwt.csv", row.names = FALSE)'
# Stopping distance (ft) against speed (mph) of 50 cars in the 1920s (R datasets): many tied
# speeds, a test of loess's neighbourhoods.
Rscript -e 'write.csv(cars, "data/cars.csv", row.names = FALSE)'
