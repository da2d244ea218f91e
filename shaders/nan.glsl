// nan.glsl: NaN and infinity tests on the bits, in every generated kernel.
// Vulkan lets a driver assume that no NaN or infinity exists unless the
// module declares SignedZeroInfNanPreserve (codegen/spirv.c adds it where the
// device offers it), and some drivers (NVIDIA's) then fold isnan(x) and
// x != x to false.  Integer compares on the bits cannot be folded that way.
// The macros at the end make the builtins' names refer to these, in the
// helper files that follow and in the kernel alike.
bool vk_isnan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bvec2 vk_isnan(vec2 x) { return greaterThan(floatBitsToUint(x) & 0x7fffffffu, uvec2(0x7f800000u)); }
bvec3 vk_isnan(vec3 x) { return greaterThan(floatBitsToUint(x) & 0x7fffffffu, uvec3(0x7f800000u)); }
bvec4 vk_isnan(vec4 x) { return greaterThan(floatBitsToUint(x) & 0x7fffffffu, uvec4(0x7f800000u)); }
bool vk_isinf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
bvec2 vk_isinf(vec2 x) { return equal(floatBitsToUint(x) & 0x7fffffffu, uvec2(0x7f800000u)); }
bvec3 vk_isinf(vec3 x) { return equal(floatBitsToUint(x) & 0x7fffffffu, uvec3(0x7f800000u)); }
bvec4 vk_isinf(vec4 x) { return equal(floatBitsToUint(x) & 0x7fffffffu, uvec4(0x7f800000u)); }
