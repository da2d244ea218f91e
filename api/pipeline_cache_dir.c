/*
 * Where the context keeps its pipeline cache: the SPIR-V cache's directory
 * (options->cache_dir, else $VKHLO_CACHE_DIR, else $XDG_CACHE_HOME/vkhlo,
 * else ~/.cache/vkhlo; "off", "" or disable_cache: none), so that one
 * switch governs both caches, and the path of the tuning file there
 * (api/tune.c).  Runtime-side (no compiler needed).
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
  /* the tuning file beside it (api/tune.c): one per device and driver */
  const vkrt_device_info_t *info = vkrt_device_info(ctx->device);
  size_t n = strlen(dir) + 64;
  ctx->tuning_path = vkhlo_malloc(ctx->allocator, n);
  if (!ctx->tuning_path) return VKHLO_NO_MEMORY();
  snprintf(ctx->tuning_path, n, "%s/tuning-%04x-%04x-%08x.txt", dir, info->vendor_id, info->device_id,
           info->driver_version);
  return vkrt_pipeline_cache_open(ctx->device, dir);
}
