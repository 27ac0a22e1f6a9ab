# bench/ — benchmarks (`make bench`). Each area appends its scripts to BENCHES
# and builds any helper programs here with the program macro.
