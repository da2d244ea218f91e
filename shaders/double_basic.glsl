bool vk_signbit(double x) { return int(unpackDouble2x32(x).y) < 0; }
double vk_dinf() { return packDouble2x32(uvec2(0u, 0x7FF00000u)); }
