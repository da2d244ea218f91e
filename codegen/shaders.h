/*
 * The files of shaders/ (hand-written GLSL: library kernels as .comp files,
 * helper functions as .glsl files), embedded in the library at build time
 * by cmake/embed_files.cmake.  Each .comp file is also compiled by
 * glslangValidator and checked by spirv-val when the library is built, so a
 * kernel with an error fails the build, with its own line numbers.
 *
 * Generated code splices its parts into a kernel through the #define hooks
 * each .comp file documents at its top; codegen prepends the definitions
 * (after the #version line) before compiling the text with glslang.
 */
#ifndef VKHLO_CODEGEN_SHADERS_H
#define VKHLO_CODEGEN_SHADERS_H

#include <stddef.h>

typedef struct shaders_file {
  const char *name; /* file name in shaders/, e.g. "gemm_cpu.comp" */
  const char *text; /* the file's bytes, NUL-terminated */
  size_t size_bytes;  /* without the NUL */
} shaders_file_t;

/* The embedded files, ended by an entry whose name is NULL. */
extern const shaders_file_t shaders_files[];

/* The file called |name| (e.g. "gemm_cpu.comp"), or NULL if there is none. */
const shaders_file_t *shaders_find(const char *name);

#endif
