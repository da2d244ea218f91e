/*
 * Helpers shared by the cmocka test programs (tests/test_support.c, linked
 * into every test).  Include after <cmocka.h>.
 */
#ifndef VKHLO_TESTS_TEST_SUPPORT_H
#define VKHLO_TESTS_TEST_SUPPORT_H

#include "vkhlo/vkhlo.h"

/* Fails the current test with the status's message when |st| is not OK. */
void expect_ok(vkhlo_status_t st);

/* cmocka group setup/teardown: a context on the default device with the
 * Khronos validation layer on, in *state; teardown fails the group when the
 * layer reported anything. */
int validated_context_setup(void **state);
int validated_context_teardown(void **state);

#endif
