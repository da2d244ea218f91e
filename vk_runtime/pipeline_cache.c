/*
 * The device's VkPipelineCache, kept on disk between runs so that the
 * pipelines of a loaded executable (api/vkx_load.c) or of a compile whose
 * SPIR-V came from the cache are not built by the driver again.
 *
 * One file per (vendorID, deviceID, driverVersion, pipelineCacheUUID):
 * a driver update or another GPU gets its own file, and a file is only
 * handed to vkCreatePipelineCache when its Vulkan header (length, version
 * ONE, vendor, device, UUID) names this device.  The file is replaced
 * atomically (write DIR/NAME.tmp.PID, rename), so concurrent processes
 * never read half a file; the last one to save wins.
 */
#define _POSIX_C_SOURCE 200809L
#include "vk_runtime/vkrt_internal.h"
#include "support/file.h"
#include "support/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* mkdir -p */
static void make_dirs(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(path, 0777);
      *p = '/';
    }
  mkdir(path, 0777);
}

/* The whole file, or NULL (missing, unreadable, over 1 GiB). */
static unsigned char *read_all(const vkhlo_allocator_t *allocator, const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n > 0 && n < (1l << 30) && fseek(f, 0, SEEK_SET) == 0 && (buf = vkhlo_malloc(allocator, (size_t)n))) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      vkhlo_free(allocator, buf);
      buf = NULL;
    }
  }
  fclose(f);
  *out_size = buf ? (size_t)n : 0;
  return buf;
}

vkhlo_status_t vkrt_pipeline_cache_open(vkrt_device_t *d, const char *dir) {
  if (!dir || !*dir) return NULL;
  VkPhysicalDeviceProperties props;
  d->ifn.vkGetPhysicalDeviceProperties(d->physical_device, &props);
  char name[160];
  int k = snprintf(name, sizeof name, "pipelines-%04x-%04x-%08x-", props.vendorID, props.deviceID,
                   props.driverVersion);
  for (unsigned i = 0; i < VK_UUID_SIZE; i++) k += snprintf(name + k, sizeof name - (size_t)k, "%02x", props.pipelineCacheUUID[i]);
  size_t len = strlen(dir) + strlen(name) + 2;
  char *path = vkhlo_malloc(d->allocator, len);
  if (!path) return VKHLO_NO_MEMORY();
  snprintf(path, len, "%s/%s", dir, name);
  make_dirs(dir);

  size_t size = 0;
  unsigned char *data = read_all(d->allocator, path, &size);
  /* VkPipelineCacheHeaderVersionOne: u32 length (>= 32), u32 version (1),
   * u32 vendorID, u32 deviceID, u8 pipelineCacheUUID[16] */
  if (data && (size < 32 || rd32(data) < 32 || rd32(data) > size || rd32(data + 4) != 1 ||
               rd32(data + 8) != props.vendorID || rd32(data + 12) != props.deviceID ||
               memcmp(data + 16, props.pipelineCacheUUID, VK_UUID_SIZE) != 0)) {
    vkhlo_free(d->allocator, data);
    data = NULL;
    size = 0;
  }
  VkPipelineCacheCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
      .initialDataSize = size,
      .pInitialData = data,
  };
  VkPipelineCache cache;
  VkResult r = d->vk.vkCreatePipelineCache(d->device, &info, d->alloc, &cache);
  if (r != VK_SUCCESS && data) { /* the driver refused the data: start empty */
    info.initialDataSize = 0;
    info.pInitialData = NULL;
    size = 0;
    r = d->vk.vkCreatePipelineCache(d->device, &info, d->alloc, &cache);
  }
  uint64_t hash = data ? fnv1a(FNV1A_BASIS, data, size) : 0;
  vkhlo_free(d->allocator, data);
  if (r != VK_SUCCESS) {
    vkhlo_free(d->allocator, path);
    return vkrt_vk_status("vkCreatePipelineCache", r);
  }
  if (d->pipeline_cache) d->vk.vkDestroyPipelineCache(d->device, d->pipeline_cache, d->alloc);
  d->pipeline_cache = cache;
  vkhlo_free(d->allocator, d->pipeline_cache_path);
  d->pipeline_cache_path = path;
  d->pipeline_cache_loaded_size = size;
  d->pipeline_cache_loaded_hash = hash;
  return NULL;
}

vkhlo_status_t vkrt_pipeline_cache_save(vkrt_device_t *d) {
  if (!d->pipeline_cache_path || !d->pipeline_cache) return NULL;
  size_t size = 0;
  VkResult r = d->vk.vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, NULL);
  if (r != VK_SUCCESS || size == 0) return NULL;
  void *data = vkhlo_malloc(d->allocator, size);
  if (!data) return VKHLO_NO_MEMORY();
  r = d->vk.vkGetPipelineCacheData(d->device, d->pipeline_cache, &size, data);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    vkhlo_free(d->allocator, data);
    return vkrt_vk_status("vkGetPipelineCacheData", r);
  }
  uint64_t hash = fnv1a(FNV1A_BASIS, data, size);
  vkhlo_status_t st = NULL;
  if (size != d->pipeline_cache_loaded_size || hash != d->pipeline_cache_loaded_hash) {
    st = support_write_file(d->allocator, d->pipeline_cache_path, data, size);
    if (!st) {
      d->pipeline_cache_loaded_size = size;
      d->pipeline_cache_loaded_hash = hash;
    }
  }
  vkhlo_free(d->allocator, data);
  return st;
}
