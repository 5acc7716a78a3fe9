// The canonical form of a general eigendecomposition (mir.eig in ops.def): what makes every
// device's w and V the same tensors, whatever order and phases its algorithm produced.
#pragma once
#include <complex>
#include <cstdint>

namespace rlx {

// Sorts w [n] (and V's columns with it; V row-major n×n, eigenvectors as columns) by real part,
// then imaginary part — real parts within 1e-9·max|w| count as equal, so the two members of a
// conjugate pair order by their imaginary parts on every device — and scales each column to unit
// length with its entry of largest magnitude (the first within 1e-9 of it) real and positive.
void canonical_eig(std::complex<double>* w, std::complex<double>* v, int64_t n);

}  // namespace rlx
