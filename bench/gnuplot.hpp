// gnuplot: runs a gnuplot script over a data file into a PNG, for
// `podref bench --plot` and `podref hollow --plot`.
#pragma once

#include <string>

namespace podref::bench {

/// Writes `data` and `script` to a temporary directory and runs gnuplot
/// with `datafile`, `outfile` (= `png`) and `variables` (more `name=value;`
/// assignments, e.g. "blocks=3;") set. Returns an error message (gnuplot
/// missing, a file name gnuplot's quoting cannot carry, its output when it
/// fails), empty on success.
std::string run_gnuplot(const std::string& script, const std::string& data,
                        const std::string& png,
                        const std::string& variables = {});

} // namespace podref::bench
