// Index arithmetic: floor and ceiling division of int (b > 0).
// Prelude piece for GLSL_HELPERS_INDEX (codegen/glsl_prelude.c).
int vk_floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int vk_ceil_div(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
