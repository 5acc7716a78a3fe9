// The [13/13] Padé approximant of exp and the largest ‖2⁻ˢA‖₁ it serves in f64 (Higham, SIAM J.
// Matrix Anal. Appl. 26(4), 2005): the constants every device's matrix_exp scales and sums with.
#pragma once

namespace rlx::ops {

inline constexpr double kPade13[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
                                     10559470521600.0,    670442572800.0,      33522128640.0,      1323241920.0,       40840800.0,
                                     960960.0,            16380.0,             182.0,              1.0};
inline constexpr double kTheta13 = 5.371920351148152;

}  // namespace rlx::ops
