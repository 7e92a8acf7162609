// out (cols x rows) = transpose of a (rows x cols) through a 16 x 17 local tile; 16 x 16 workgroups.
#include "wave.hpp"

[[wave::kernel]] void transpose(const float* a, float* out, uint32_t rows, uint32_t cols) {
    __shared__ float tile[16][17];
    uint32_t tx = wave::thread_id(0);
    uint32_t ty = wave::thread_id(1);
    uint32_t bx = wave::workgroup_id(0) * 16;
    uint32_t by = wave::workgroup_id(1) * 16;
    if (by + ty < rows && bx + tx < cols) {
        tile[ty][tx] = a[(by + ty) * cols + bx + tx];
    }
    wave::barrier();
    if (bx + ty < cols && by + tx < rows) {
        out[(bx + ty) * rows + by + tx] = tile[tx][ty];
    }
}
