/*
 * Helpers shared by the cmocka test programs (tests/test_support.c, linked
 * into every test).  Include after <cmocka.h>.
 */
#ifndef VKHLO_TESTS_TEST_SUPPORT_H
#define VKHLO_TESTS_TEST_SUPPORT_H

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkhlo/vkhlo.h"

/* The whole file at |path|, NUL-terminated (heap; caller frees), its size
 * in *out_size; NULL when it cannot be read. */
char *test_read_file(const char *path, size_t *out_size);

/* Calls |fn| on each file in |dir| whose name ends with |suffix|, with its
 * path and whole text (NUL-terminated, |size| bytes; freed after the
 * call), until |fn| returns false.  Files that cannot be read are skipped.
 * Returns how many files |fn| was given, or -1 when |dir| cannot be
 * opened. */
typedef bool (*test_file_fn)(const char *path, const char *text, size_t size, void *user);
int test_for_each_file(const char *dir, const char *suffix, test_file_fn fn, void *user);

/* True when some kernel GLSL file (*.comp) in |dir| (a compile's
 * dump_dir) contains |needle|. */
bool test_dump_contains(const char *dir, const char *needle);
/* The same over the files whose names end with |suffix| (".mlir": the
 * program after each pass). */
bool test_dump_file_contains(const char *dir, const char *suffix, const char *needle);

/* Removes |dir| and the files in it (a dump_dir; not recursive). */
void test_remove_dir(const char *dir);

/* |text| compiled on |ctx| (as "test.mlir", default options); fails the
 * current test on an error.  The caller destroys the executable. */
vkhlo_executable_t *test_compile(vkhlo_context_t *ctx, const char *text);

/* |exe| serialized (vkhlo_executable_serialize) and loaded on |ctx|: a new
 * executable, which the caller destroys (|exe| stays); fails the test on
 * an error. */
vkhlo_executable_t *test_reload(vkhlo_context_t *ctx, const vkhlo_executable_t *exe);

/* x[16, 32] w1[32, 32] w2[32, 32] as two dot_generals of the same shapes
 * (parameters x, w1, w2): two kernels of one code. */
extern const char test_two_products_program[];

/* The same with its dumps (compile option dump_dir) in a new directory
 * made from |dir|, a mkdtemp template ("/tmp/nameXXXXXX") that becomes its
 * name: for test_dump_contains; the caller removes it (test_remove_dir). */
vkhlo_executable_t *test_compile_dumped(vkhlo_context_t *ctx, const char *text, char *dir);

/* Fails the current test with the status's message when |st| is not OK. */
void expect_ok(vkhlo_status_t st);

/* Compiles |text| (named |file_name| in messages) and fails the test
 * unless the compile fails with |code|, no executable, and a message that
 * contains every string of the NULL-terminated list after |code|. */
void test_expect_compile_error(vkhlo_context_t *ctx, const char *text, const char *file_name,
                               vkhlo_status_code_t code, ...);

/* cmocka group setup/teardown: a context on the default device with the
 * Khronos validation layer on, in *state; teardown fails the group when the
 * layer reported anything. */
int validated_context_setup(void **state);
int validated_context_teardown(void **state);

/* A context on the default device with the validation layer on, created
 * while $|name| = |value| (the knobs api/context.c reads at creation, such
 * as VKHLO_REDUCE=subgroup for a GPU's kernel variants on lavapipe); the
 * variable is unset again.  Fails the test when creation fails (NULL).
 * The caller destroys it after checking its validation message count. */
vkhlo_context_t *test_context_with_env(const char *name, const char *value);

/* The value of f16 bits (|half|) or bf16 bits |h|, finite ones. */
double test_16bit_value(bool half, uint16_t h);

/* The next value in [-1, 1) of the linear congruential sequence |state|. */
double test_uniform(uint32_t *state);

/* |b| Hermitian positive definite n x n matrices into |a| (row-major, b * n * n):
 * a Gram matrix / n + I of values from test_uniform(|seed|) (complex when
 * |cplx|), and their lower Cholesky factors into |l| computed in double
 * (the Cholesky-Banachiewicz recurrence; zeros above the diagonal). */
void test_hpd(int b, int n, bool cplx, uint32_t seed, double complex *a, double complex *l);

#endif
