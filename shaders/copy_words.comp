#version 450
/*
 * copy_words.comp: dst[i] = src[i] for every 32-bit word the two bindings
 * share (the shorter binding's length), by a grid-stride loop.
 *
 * Copies that must be conditional use it: vkCmdCopyBuffer is not affected
 * by conditional rendering, so inside a batched while loop's regions
 * (api/execute.c, "Batched iterations") the executor dispatches this
 * kernel for the loop's copies instead (whole words: the executor takes
 * that path only where the copy's size and offsets are multiples of 4).
 *
 * Bindings: 0 the source range, 1 the destination range, each bound with
 * the copy's size.  Any workgroup count.
 */
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer Source { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Destination { uint dst[]; };

void main() {
  uint n = uint(min(src.length(), dst.length()));
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) dst[i] = src[i];
}
