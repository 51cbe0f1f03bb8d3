/* pyrepr.h: the two pieces of Python number semantics the Spider 2.0
 * comparison depends on: str()/repr() of a float (the shortest string that
 * reads back as the same double, in Python's layout: "1.0", "1e-05",
 * "1e+16", "inf", "nan") and math.isclose(a, b, rel_tol=1e-09, abs_tol). */
#ifndef SX_PYREPR_H
#define SX_PYREPR_H

#include <stdbool.h>
#include <stddef.h>

/* Room for any float's repr plus the NUL. */
#define SX_PY_FLOAT_REPR_MAX 32

/* Writes Python's repr(x), NUL-terminated, into buf (at least SX_PY_FLOAT_REPR_MAX bytes)
 * and returns its length. */
size_t sx_py_float_repr(double x, char *buf);

/* math.isclose(a, b, rel_tol=1e-09, abs_tol=abs_tol). */
bool sx_py_isclose(double a, double b, double abs_tol);

void sx_pyrepr_test(bool verbose);

#endif
