/*
 * Where the context keeps its pipeline cache: the SPIR-V cache's directory
 * (options->cache_dir, else $VKHLO_CACHE_DIR, else $XDG_CACHE_HOME/vkhlo,
 * else ~/.cache/vkhlo; "off", "" or disable_cache: none), so that one
 * switch governs both caches.  Runtime-side (no compiler needed).
 */
#define _POSIX_C_SOURCE 200809L
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vkhlo_status_t context_open_pipeline_cache(vkhlo_context_t *ctx, const vkhlo_context_options_t *options) {
  if (options->disable_cache) return NULL;
  char dir[4096];
  const char *env;
  if (options->cache_dir) {
    if (!*options->cache_dir || strcmp(options->cache_dir, "off") == 0) return NULL;
    snprintf(dir, sizeof dir, "%s", options->cache_dir);
  } else if ((env = getenv("VKHLO_CACHE_DIR")) != NULL) {
    if (!*env || strcmp(env, "off") == 0) return NULL;
    snprintf(dir, sizeof dir, "%s", env);
  } else if ((env = getenv("XDG_CACHE_HOME")) != NULL && *env) {
    snprintf(dir, sizeof dir, "%s/vkhlo", env);
  } else if ((env = getenv("HOME")) != NULL && *env) {
    snprintf(dir, sizeof dir, "%s/.cache/vkhlo", env);
  } else {
    return NULL;
  }
  return vkrt_pipeline_cache_open(ctx->device, dir);
}
