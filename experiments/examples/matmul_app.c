/* A program using the GEMM 1024^3 that `loom export` wrote (see README). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "matmul_K1024_M1024_N1024_t1.h"

int main(void) {
  const int n = 1024;
  float* a = malloc(sizeof(float) * n * n);
  float* b = malloc(sizeof(float) * n * n);
  float* c = malloc(sizeof(float) * n * n);
  for (int i = 0; i < n * n; ++i) a[i] = (float)(i % 7) * 0.25f, b[i] = (float)(i % 5) - 1;
  matmul_K1024_M1024_N1024_t1(a, b, c); /* C = A B, row-major */
  double want = 0;
  for (int k = 0; k < n; ++k) want += (double)a[5 * n + k] * b[k * n + 9];
  printf("C[5][9] = %g (expected %g)\n", c[5 * n + 9], want);
  return fabs(c[5 * n + 9] - want) > 1e-3 * fabs(want) ? 1 : 0;
}
