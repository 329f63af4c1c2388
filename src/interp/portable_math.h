// log and exp built only from IEEE-exact operations (+, -, *, /, frexp, ldexp), so
// input generation gives the same bits with every C library. Not for the interpreter's
// intrinsics, which use <cmath> and round to the IR type.
#pragma once

namespace dragon::interp {

// Natural logarithm of x > 0, within a few ulp.
double portable_log(double x);
// e^x, within a few ulp; 0 below -745 and +inf above 709.
double portable_exp(double x);

}  // namespace dragon::interp
