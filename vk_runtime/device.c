/*
 * Devices: loading Vulkan, creating the instance, choosing a physical
 * device, creating the logical device with the features vkhlo's kernels use,
 * and describing what the device can do (vkrt_caps_t).
 *
 * Loading.  Vulkan is loaded at run time by volk (volkInitialize dlopens
 * libvulkan.so.1); nothing links libvulkan.  After that every call goes
 * through pointers kept in the vkrt_device_t: instance-level entry points
 * fetched with vkGetInstanceProcAddr (vkrt_instance_fns_t) and device-level
 * ones in a VolkDeviceTable.  volk keeps a few global pointers of its own
 * (the loader's vkGetInstanceProcAddr, and the instance pointers that
 * volkLoadInstanceOnly sets, which volkLoadDeviceTable needs for
 * vkGetDeviceProcAddr); vkhlo never calls through them, so two devices on
 * two instances do not interfere.  Creating devices concurrently from two
 * threads races on those volk globals (benignly: they get the same values).
 *
 * Instance.  The highest API version the loader offers up to 1.3, at least
 * 1.1.  With |enable_validation| the Khronos validation layer is required
 * (UNAVAILABLE when it is missing), synchronization validation is turned on
 * when the layer offers VK_EXT_validation_features, and a VK_EXT_debug_utils
 * messenger forwards WARNING and ERROR messages to |message_fn| (or stderr).
 * The same messenger create-info is chained into VkInstanceCreateInfo so
 * that messages from vkCreateInstance/vkDestroyInstance are seen too.
 *
 * Choice of physical device.  |selector|, else $VKHLO_DEVICE, else the
 * first device in the order discrete, integrated, virtual, CPU, other
 * (among those with Vulkan >= 1.1 and a compute queue).  A selector is a
 * decimal index into vkrt_enumerate_devices' list or a case-insensitive
 * substring of the device name.  No match: UNAVAILABLE listing the names.
 *
 * Features.  Among shaderInt64/Float64/Int16 (core), 8- and 16-bit storage,
 * shaderInt8 and shaderFloat16, everything the device has is enabled
 * (Vulkan 1.1/1.2 feature structs when the device API is >= 1.2, the KHR
 * extension structs otherwise), and the caps report what was enabled.
 *
 * External mode (options->external_*): the caller's instance, physical
 * device, device and queue are used and never destroyed; vkhlo creates only
 * its command pool and pipeline cache.  The caps then describe what the
 * physical device supports, trusting the caller to have enabled it.
 *
 * A failed create leaves nothing allocated: every path goes through
 * vkrt_device_destroy, which tolerates a half-built device.
 */
#include "vk_runtime/vkrt_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/strbuf.h"

#define VKRT_NO_LOADER_MESSAGE \
  "no Vulkan loader found (install libvulkan1 and a driver such as mesa-vulkan-drivers)"
#define VKRT_VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

/* ---- results and statuses ---------------------------------------------- */

const char *vkrt_result_name(VkResult result) {
  switch (result) {
#define NAME(r) case r: return #r;
    NAME(VK_SUCCESS)
    NAME(VK_NOT_READY)
    NAME(VK_TIMEOUT)
    NAME(VK_EVENT_SET)
    NAME(VK_EVENT_RESET)
    NAME(VK_INCOMPLETE)
    NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    NAME(VK_ERROR_INITIALIZATION_FAILED)
    NAME(VK_ERROR_DEVICE_LOST)
    NAME(VK_ERROR_MEMORY_MAP_FAILED)
    NAME(VK_ERROR_LAYER_NOT_PRESENT)
    NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    NAME(VK_ERROR_TOO_MANY_OBJECTS)
    NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    NAME(VK_ERROR_FRAGMENTED_POOL)
    NAME(VK_ERROR_UNKNOWN)
    NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    NAME(VK_ERROR_FRAGMENTATION)
    NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    NAME(VK_PIPELINE_COMPILE_REQUIRED)
    NAME(VK_ERROR_SURFACE_LOST_KHR)
    NAME(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
    NAME(VK_SUBOPTIMAL_KHR)
    NAME(VK_ERROR_OUT_OF_DATE_KHR)
    NAME(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
    NAME(VK_ERROR_VALIDATION_FAILED_EXT)
    NAME(VK_ERROR_INVALID_SHADER_NV)
    NAME(VK_ERROR_NOT_PERMITTED_KHR)
    NAME(VK_THREAD_IDLE_KHR)
    NAME(VK_THREAD_DONE_KHR)
    NAME(VK_OPERATION_DEFERRED_KHR)
    NAME(VK_OPERATION_NOT_DEFERRED_KHR)
#undef NAME
    default: break;
  }
  return "VK_ERROR_UNKNOWN_RESULT";
}

vkhlo_status_t vkrt_vk_status(const char *call, VkResult result) {
  vkhlo_status_code_t code = VKHLO_STATUS_INTERNAL;
  const char *hint = "";
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_TOO_MANY_OBJECTS:
      code = VKHLO_STATUS_RESOURCE_EXHAUSTED;
      break;
    case VK_ERROR_DEVICE_LOST:
      code = VKHLO_STATUS_UNAVAILABLE;
      hint = " (device lost)";
      break;
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
      code = VKHLO_STATUS_UNAVAILABLE;
      break;
    default:
      break;
  }
  if (result == VK_SUCCESS) code = VKHLO_STATUS_INTERNAL; /* caller bug; still a status */
  return vkhlo_status_make(code, "%s failed: %s (%d)%s", call, vkrt_result_name(result),
                           (int)result, hint);
}

/* ---- small helpers ------------------------------------------------------ */

static uint32_t version_no_patch(uint32_t v) {
  return VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), 0);
}

static bool contains_ignore_case(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0) return true;
  for (const char *h = haystack; *h; h++) {
    size_t i = 0;
    while (i < n && h[i] &&
           tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n) return true;
  }
  return false;
}

static bool is_decimal(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return false;
  return true;
}

static vkrt_device_type_t device_type_of(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return VKRT_DEVICE_INTEGRATED_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return VKRT_DEVICE_DISCRETE_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return VKRT_DEVICE_VIRTUAL_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return VKRT_DEVICE_CPU;
    default: return VKRT_DEVICE_OTHER;
  }
}

/* Rank in the default order: lower is better. */
static int type_rank(vkrt_device_type_t t) {
  switch (t) {
    case VKRT_DEVICE_DISCRETE_GPU: return 0;
    case VKRT_DEVICE_INTEGRATED_GPU: return 1;
    case VKRT_DEVICE_VIRTUAL_GPU: return 2;
    case VKRT_DEVICE_CPU: return 3;
    default: return 4;
  }
}

/* Loads the loader (or adopts the caller's vkGetInstanceProcAddr). */
static vkhlo_status_t load_loader(void *external_gipa, PFN_vkGetInstanceProcAddr *out_gipa) {
  *out_gipa = NULL;
  if (external_gipa) {
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)(uintptr_t)external_gipa;
    volkInitializeCustom(gipa);
    *out_gipa = gipa;
    return NULL;
  }
  if (volkInitialize() != VK_SUCCESS || !vkGetInstanceProcAddr)
    return vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE, VKRT_NO_LOADER_MESSAGE);
  *out_gipa = vkGetInstanceProcAddr; /* volk's copy of the loader's entry point */
  return NULL;
}

#define LOAD_INSTANCE_FN(d, name) \
  ((d)->ifn.name = (PFN_##name)(d)->ifn.vkGetInstanceProcAddr((d)->instance, #name))

static vkhlo_status_t load_instance_fns(vkrt_device_t *d) {
  LOAD_INSTANCE_FN(d, vkDestroyInstance);
  LOAD_INSTANCE_FN(d, vkEnumeratePhysicalDevices);
  LOAD_INSTANCE_FN(d, vkGetPhysicalDeviceProperties);
  LOAD_INSTANCE_FN(d, vkGetPhysicalDeviceProperties2);
  LOAD_INSTANCE_FN(d, vkGetPhysicalDeviceFeatures);
  LOAD_INSTANCE_FN(d, vkGetPhysicalDeviceFeatures2);
  LOAD_INSTANCE_FN(d, vkGetPhysicalDeviceQueueFamilyProperties);
  LOAD_INSTANCE_FN(d, vkGetPhysicalDeviceMemoryProperties);
  LOAD_INSTANCE_FN(d, vkGetPhysicalDeviceFormatProperties);
  LOAD_INSTANCE_FN(d, vkEnumerateDeviceExtensionProperties);
  LOAD_INSTANCE_FN(d, vkCreateDevice);
  LOAD_INSTANCE_FN(d, vkGetDeviceProcAddr);
  LOAD_INSTANCE_FN(d, vkCreateDebugUtilsMessengerEXT);
  LOAD_INSTANCE_FN(d, vkDestroyDebugUtilsMessengerEXT);
  if (!d->ifn.vkDestroyInstance || !d->ifn.vkEnumeratePhysicalDevices ||
      !d->ifn.vkGetPhysicalDeviceProperties || !d->ifn.vkGetPhysicalDeviceProperties2 ||
      !d->ifn.vkGetPhysicalDeviceFeatures || !d->ifn.vkGetPhysicalDeviceFeatures2 ||
      !d->ifn.vkGetPhysicalDeviceQueueFamilyProperties ||
      !d->ifn.vkGetPhysicalDeviceMemoryProperties ||
      !d->ifn.vkEnumerateDeviceExtensionProperties || !d->ifn.vkCreateDevice ||
      !d->ifn.vkGetDeviceProcAddr)
    return vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE,
                             "the Vulkan loader lacks Vulkan 1.1 instance entry points");
  return NULL;
}

/* ---- debug messenger ---------------------------------------------------- */

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  vkrt_device_t *d = user;
  const char *sev = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
  const char *kind = (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)    ? "validation"
                     : (types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT) ? "performance"
                                                                                 : "general";
  const char *text = data && data->pMessage ? data->pMessage : "(no message)";
  char *line = NULL;
  int n = snprintf(NULL, 0, "vulkan %s %s: %s", kind, sev, text);
  if (n > 0 && (line = vkhlo_malloc(d ? d->allocator : NULL, (size_t)n + 1)) != NULL)
    snprintf(line, (size_t)n + 1, "vulkan %s %s: %s", kind, sev, text);
  const char *msg = line ? line : text;
  if (d && d->message_fn)
    d->message_fn(d->message_user, msg);
  else
    fprintf(stderr, "%s\n", msg);
  vkhlo_free(d ? d->allocator : NULL, line);
  return VK_FALSE;
}

static VkDebugUtilsMessengerCreateInfoEXT messenger_info(vkrt_device_t *d) {
  VkDebugUtilsMessengerCreateInfoEXT info = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = debug_callback,
      .pUserData = d,
  };
  return info;
}

/* ---- instance ----------------------------------------------------------- */

static bool has_extension(const VkExtensionProperties *exts, uint32_t count, const char *name) {
  for (uint32_t i = 0; i < count; i++)
    if (strcmp(exts[i].extensionName, name) == 0) return true;
  return false;
}

/* Instance extensions (of |layer|, or of the implementation for NULL). */
static vkhlo_status_t instance_extensions(const vkhlo_allocator_t *allocator, PFN_vkGetInstanceProcAddr gipa, const char *layer,
                                          VkExtensionProperties **out, uint32_t *out_count) {
  *out = NULL;
  *out_count = 0;
  PFN_vkEnumerateInstanceExtensionProperties enumerate =
      (PFN_vkEnumerateInstanceExtensionProperties)gipa(NULL, "vkEnumerateInstanceExtensionProperties");
  if (!enumerate) return NULL;
  uint32_t count = 0;
  VkResult r = enumerate(layer, &count, NULL);
  if (r != VK_SUCCESS) return vkrt_vk_status("vkEnumerateInstanceExtensionProperties", r);
  VkExtensionProperties *exts = vkhlo_calloc(allocator, count ? count : 1, sizeof *exts);
  if (!exts) return VKHLO_NO_MEMORY();
  r = enumerate(layer, &count, exts);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    vkhlo_free(allocator, exts);
    return vkrt_vk_status("vkEnumerateInstanceExtensionProperties", r);
  }
  *out = exts;
  *out_count = count;
  return NULL;
}

static vkhlo_status_t has_validation_layer(const vkhlo_allocator_t *allocator, PFN_vkGetInstanceProcAddr gipa, bool *out) {
  *out = false;
  PFN_vkEnumerateInstanceLayerProperties enumerate =
      (PFN_vkEnumerateInstanceLayerProperties)gipa(NULL, "vkEnumerateInstanceLayerProperties");
  if (!enumerate) return NULL;
  uint32_t count = 0;
  VkResult r = enumerate(&count, NULL);
  if (r != VK_SUCCESS) return vkrt_vk_status("vkEnumerateInstanceLayerProperties", r);
  VkLayerProperties *layers = vkhlo_calloc(allocator, count ? count : 1, sizeof *layers);
  if (!layers) return VKHLO_NO_MEMORY();
  r = enumerate(&count, layers);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    vkhlo_free(allocator, layers);
    return vkrt_vk_status("vkEnumerateInstanceLayerProperties", r);
  }
  for (uint32_t i = 0; i < count; i++)
    if (strcmp(layers[i].layerName, VKRT_VALIDATION_LAYER) == 0) *out = true;
  vkhlo_free(allocator, layers);
  return NULL;
}

/* Creates d->instance (and, with validation, d->messenger after the
 * instance functions are loaded by the caller). */
static vkhlo_status_t create_instance(vkrt_device_t *d, bool validation) {
  PFN_vkGetInstanceProcAddr gipa = d->ifn.vkGetInstanceProcAddr;
  PFN_vkEnumerateInstanceVersion enumerate_version =
      (PFN_vkEnumerateInstanceVersion)gipa(NULL, "vkEnumerateInstanceVersion");
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (enumerate_version && enumerate_version(&loader_version) != VK_SUCCESS)
    loader_version = VK_API_VERSION_1_0;
  if (version_no_patch(loader_version) < VK_API_VERSION_1_1)
    return vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE,
                             "the Vulkan loader supports only Vulkan %u.%u; vkhlo needs 1.1",
                             VK_API_VERSION_MAJOR(loader_version),
                             VK_API_VERSION_MINOR(loader_version));
  uint32_t api = version_no_patch(loader_version);
  if (api > VK_API_VERSION_1_3) api = VK_API_VERSION_1_3;

  PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
  if (!create) return vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE, VKRT_NO_LOADER_MESSAGE);

  VkExtensionProperties *exts = NULL, *layer_exts = NULL;
  uint32_t ext_count = 0, layer_ext_count = 0;
  VKHLO_RETURN_IF_ERROR(instance_extensions(d->allocator, gipa, NULL, &exts, &ext_count));

  const char *enabled[4];
  uint32_t enabled_count = 0;
  VkInstanceCreateFlags flags = 0;
  if (has_extension(exts, ext_count, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    enabled[enabled_count++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  const void *next = NULL;
  const char *layers[1] = {VKRT_VALIDATION_LAYER};
  VkDebugUtilsMessengerCreateInfoEXT dbg = messenger_info(d);
  VkValidationFeatureEnableEXT features_enabled[1] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features = {
      .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
      .enabledValidationFeatureCount = 1,
      .pEnabledValidationFeatures = features_enabled,
  };
  if (validation) {
    bool have_layer = false;
    vkhlo_status_t s = has_validation_layer(d->allocator, gipa, &have_layer);
    if (!s && !have_layer)
      s = vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE,
                            "Vulkan validation was requested but " VKRT_VALIDATION_LAYER
                            " is not installed (Debian: apt install vulkan-validationlayers)");
    if (!s) s = instance_extensions(d->allocator, gipa, VKRT_VALIDATION_LAYER, &layer_exts, &layer_ext_count);
    if (s) {
      vkhlo_free(d->allocator, exts);
      return s;
    }
    bool debug_utils = has_extension(exts, ext_count, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
                       has_extension(layer_exts, layer_ext_count, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (!debug_utils) {
      vkhlo_free(d->allocator, exts);
      vkhlo_free(d->allocator, layer_exts);
      return vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE,
                               "Vulkan validation was requested but " VK_EXT_DEBUG_UTILS_EXTENSION_NAME
                               " is not available");
    }
    enabled[enabled_count++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    next = &dbg;
    if (has_extension(layer_exts, layer_ext_count, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      enabled[enabled_count++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
      features.pNext = next;
      next = &features;
    }
  }

  VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "vkhlo",
      .applicationVersion = 1,
      .pEngineName = "vkhlo",
      .engineVersion = 1,
      .apiVersion = api,
  };
  VkInstanceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pNext = next,
      .flags = flags,
      .pApplicationInfo = &app,
      .enabledLayerCount = validation ? 1 : 0,
      .ppEnabledLayerNames = validation ? layers : NULL,
      .enabledExtensionCount = enabled_count,
      .ppEnabledExtensionNames = enabled,
  };
  VkResult r = create(&info, d->alloc, &d->instance);
  vkhlo_free(d->allocator, exts);
  vkhlo_free(d->allocator, layer_exts);
  if (r != VK_SUCCESS) {
    d->instance = VK_NULL_HANDLE;
    return vkrt_vk_status("vkCreateInstance", r);
  }
  d->api_version = api;
  return NULL;
}

/* ---- physical devices --------------------------------------------------- */

static vkhlo_status_t device_extensions(vkrt_device_t *d, VkPhysicalDevice pd,
                                        VkExtensionProperties **out, uint32_t *out_count) {
  *out = NULL;
  *out_count = 0;
  uint32_t count = 0;
  VkResult r = d->ifn.vkEnumerateDeviceExtensionProperties(pd, NULL, &count, NULL);
  if (r != VK_SUCCESS) return vkrt_vk_status("vkEnumerateDeviceExtensionProperties", r);
  VkExtensionProperties *exts = vkhlo_calloc(d->allocator, count ? count : 1, sizeof *exts);
  if (!exts) return VKHLO_NO_MEMORY();
  r = d->ifn.vkEnumerateDeviceExtensionProperties(pd, NULL, &count, exts);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    vkhlo_free(d->allocator, exts);
    return vkrt_vk_status("vkEnumerateDeviceExtensionProperties", r);
  }
  *out = exts;
  *out_count = count;
  return NULL;
}

static vkhlo_status_t physical_devices(vkrt_device_t *d, VkPhysicalDevice **out, uint32_t *out_count) {
  *out = NULL;
  *out_count = 0;
  uint32_t count = 0;
  VkResult r = d->ifn.vkEnumeratePhysicalDevices(d->instance, &count, NULL);
  if (r != VK_SUCCESS) return vkrt_vk_status("vkEnumeratePhysicalDevices", r);
  VkPhysicalDevice *pds = vkhlo_calloc(d->allocator, count ? count : 1, sizeof *pds);
  if (!pds) return VKHLO_NO_MEMORY();
  r = d->ifn.vkEnumeratePhysicalDevices(d->instance, &count, pds);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    vkhlo_free(d->allocator, pds);
    return vkrt_vk_status("vkEnumeratePhysicalDevices", r);
  }
  *out = pds;
  *out_count = count;
  return NULL;
}

/* API version usable with |pd|: min(instance, device), without patch. */
static uint32_t usable_api(const vkrt_device_t *d, const VkPhysicalDeviceProperties *props) {
  uint32_t dev = version_no_patch(props->apiVersion);
  return dev < d->api_version ? dev : d->api_version;
}

static void fill_info(vkrt_device_t *d, VkPhysicalDevice pd, vkrt_device_info_t *info) {
  VkPhysicalDeviceProperties props;
  d->ifn.vkGetPhysicalDeviceProperties(pd, &props);
  memset(info, 0, sizeof *info);
  snprintf(info->name, sizeof info->name, "%s", props.deviceName);
  info->vendor_id = props.vendorID;
  info->device_id = props.deviceID;
  info->type = device_type_of(props.deviceType);
  info->api_version = props.apiVersion;
  info->driver_version = props.driverVersion;
  if (usable_api(d, &props) >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceDriverProperties driver = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &driver};
    d->ifn.vkGetPhysicalDeviceProperties2(pd, &p2);
    snprintf(info->driver_name, sizeof info->driver_name, "%s", driver.driverName);
    snprintf(info->driver_info, sizeof info->driver_info, "%s", driver.driverInfo);
  }
}

/* Queue family with COMPUTE, preferring one without GRAPHICS; -1 if none.
 * The first 64 families are looked at (devices have a handful), so that
 * no allocation can fail here and turn out-of-memory into "no device". */
static int compute_queue_family(vkrt_device_t *d, VkPhysicalDevice pd) {
  VkQueueFamilyProperties families[64];
  uint32_t count = 64;
  d->ifn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families);
  int any = -1, compute_only = -1;
  for (uint32_t i = 0; i < count; i++) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
    if (any < 0) any = (int)i;
    if (compute_only < 0 && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) compute_only = (int)i;
  }
  return compute_only >= 0 ? compute_only : any;
}

static bool usable_device(vkrt_device_t *d, VkPhysicalDevice pd) {
  VkPhysicalDeviceProperties props;
  d->ifn.vkGetPhysicalDeviceProperties(pd, &props);
  return usable_api(d, &props) >= VK_API_VERSION_1_1 && compute_queue_family(d, pd) >= 0;
}

static vkhlo_status_t no_match(vkrt_device_t *d, const VkPhysicalDevice *pds, uint32_t count,
                               const char *selector) {
  strbuf_t sb;
  strbuf_init(&sb, d->allocator);
  for (uint32_t i = 0; i < count; i++) {
    VkPhysicalDeviceProperties props;
    d->ifn.vkGetPhysicalDeviceProperties(pds[i], &props);
    strbuf_printf(&sb, "%s%u: %s", i ? ", " : "", i, props.deviceName);
  }
  char *names = strbuf_take(&sb);
  vkhlo_status_t s = vkhlo_status_make(
      VKHLO_STATUS_UNAVAILABLE, "no usable Vulkan device matches \"%s\" (Vulkan >= 1.1 with a compute queue); available: %s",
      selector, count == 0 ? "none" : names ? names : "?");
  vkhlo_free(d->allocator, names);
  return s;
}

static vkhlo_status_t choose_physical_device(vkrt_device_t *d, const char *selector) {
  if (!selector || !*selector) selector = getenv("VKHLO_DEVICE");
  if (selector && !*selector) selector = NULL;
  VkPhysicalDevice *pds = NULL;
  uint32_t count = 0;
  VKHLO_RETURN_IF_ERROR(physical_devices(d, &pds, &count));
  int chosen = -1;
  if (!selector) {
    int best_rank = 99;
    for (uint32_t i = 0; i < count; i++) {
      if (!usable_device(d, pds[i])) continue;
      VkPhysicalDeviceProperties props;
      d->ifn.vkGetPhysicalDeviceProperties(pds[i], &props);
      int rank = type_rank(device_type_of(props.deviceType));
      if (rank < best_rank) {
        best_rank = rank;
        chosen = (int)i;
      }
    }
  } else if (is_decimal(selector)) {
    unsigned long index = strtoul(selector, NULL, 10);
    if (index < count && usable_device(d, pds[index])) chosen = (int)index;
  } else {
    for (uint32_t i = 0; i < count && chosen < 0; i++) {
      VkPhysicalDeviceProperties props;
      d->ifn.vkGetPhysicalDeviceProperties(pds[i], &props);
      if (contains_ignore_case(props.deviceName, selector) && usable_device(d, pds[i]))
        chosen = (int)i;
    }
  }
  vkhlo_status_t s = NULL;
  if (chosen < 0)
    s = no_match(d, pds, count, selector ? selector : "(default)");
  else
    d->physical_device = pds[chosen];
  vkhlo_free(d->allocator, pds);
  return s;
}

/* ---- features and caps -------------------------------------------------- */

/* The feature structs we query and enable. */
typedef struct feature_set {
  VkPhysicalDeviceFeatures2 f2;
  VkPhysicalDeviceVulkan11Features v11;                /* api >= 1.2 */
  VkPhysicalDeviceVulkan12Features v12;                /* api >= 1.2 */
  VkPhysicalDevice16BitStorageFeatures s16;            /* api == 1.1 */
  VkPhysicalDevice8BitStorageFeaturesKHR s8;           /* api == 1.1 + ext */
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16i8;  /* api == 1.1 + ext */
  VkPhysicalDeviceConditionalRenderingFeaturesEXT cr;  /* ext */
} feature_set_t;

/* Links the structs that apply; |has_8bit|/|has_f16i8| only matter < 1.2. */
static void chain_features(feature_set_t *fs, bool api12, bool has_8bit, bool has_f16i8, bool has_cr) {
  fs->f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  fs->v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  fs->v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  fs->s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  fs->s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR;
  fs->f16i8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR;
  fs->cr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT;
  void **link = &fs->f2.pNext;
  if (has_cr) {
    *link = &fs->cr;
    link = &fs->cr.pNext;
  }
  if (api12) {
    *link = &fs->v11;
    link = &fs->v11.pNext;
    *link = &fs->v12;
    link = &fs->v12.pNext;
  } else {
    *link = &fs->s16;
    link = &fs->s16.pNext;
    if (has_8bit) {
      *link = &fs->s8;
      link = &fs->s8.pNext;
    }
    if (has_f16i8) {
      *link = &fs->f16i8;
      link = &fs->f16i8.pNext;
    }
  }
  *link = NULL;
}

/* Copies the wanted features that |have| reports into |want| (zeroed). */
static void select_features(const feature_set_t *have, feature_set_t *want) {
  want->f2.features.shaderInt64 = have->f2.features.shaderInt64;
  want->f2.features.shaderFloat64 = have->f2.features.shaderFloat64;
  want->f2.features.shaderInt16 = have->f2.features.shaderInt16;
  want->v11.storageBuffer16BitAccess = have->v11.storageBuffer16BitAccess;
  want->v11.uniformAndStorageBuffer16BitAccess = have->v11.uniformAndStorageBuffer16BitAccess;
  want->v12.storageBuffer8BitAccess = have->v12.storageBuffer8BitAccess;
  want->v12.uniformAndStorageBuffer8BitAccess = have->v12.uniformAndStorageBuffer8BitAccess;
  want->v12.shaderInt8 = have->v12.shaderInt8;
  want->v12.shaderFloat16 = have->v12.shaderFloat16;
  want->v12.shaderSubgroupExtendedTypes = have->v12.shaderSubgroupExtendedTypes;
  want->s16.storageBuffer16BitAccess = have->s16.storageBuffer16BitAccess;
  want->s16.uniformAndStorageBuffer16BitAccess = have->s16.uniformAndStorageBuffer16BitAccess;
  want->s8.storageBuffer8BitAccess = have->s8.storageBuffer8BitAccess;
  want->s8.uniformAndStorageBuffer8BitAccess = have->s8.uniformAndStorageBuffer8BitAccess;
  want->f16i8.shaderInt8 = have->f16i8.shaderInt8;
  want->f16i8.shaderFloat16 = have->f16i8.shaderFloat16;
  want->cr.conditionalRendering = have->cr.conditionalRendering;
}

static void caps_from_features(vkrt_caps_t *caps, const feature_set_t *fs, bool api12) {
  caps->shader_int64 = fs->f2.features.shaderInt64;
  caps->shader_float64 = fs->f2.features.shaderFloat64;
  caps->shader_int16 = fs->f2.features.shaderInt16;
  if (api12) {
    caps->storage_buffer_16bit = fs->v11.storageBuffer16BitAccess;
    caps->storage_buffer_8bit = fs->v12.storageBuffer8BitAccess;
    caps->shader_int8 = fs->v12.shaderInt8;
    caps->shader_float16 = fs->v12.shaderFloat16;
  } else {
    caps->storage_buffer_16bit = fs->s16.storageBuffer16BitAccess;
    caps->storage_buffer_8bit = fs->s8.storageBuffer8BitAccess;
    caps->shader_int8 = fs->f16i8.shaderInt8;
    caps->shader_float16 = fs->f16i8.shaderFloat16;
  }
}

/* |float_controls|: the device has float controls (api >= 1.2, or the
 * extension, enabled), so VkPhysicalDeviceFloatControlsProperties may be
 * chained. */
static void caps_from_properties(vkrt_device_t *d, bool float_controls) {
  VkPhysicalDeviceFloatControlsProperties fc = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
      .pNext = float_controls ? &fc : NULL};
  VkPhysicalDeviceMaintenance3Properties m3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, .pNext = &subgroup};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &m3};
  d->ifn.vkGetPhysicalDeviceProperties2(d->physical_device, &p2);
  const VkPhysicalDeviceLimits *l = &p2.properties.limits;
  vkrt_caps_t *c = &d->caps;
  c->subgroup_size = subgroup.subgroupSize;
  c->subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                           (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  c->subgroup_shuffle = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                        (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  for (int i = 0; i < 3; i++) {
    c->max_compute_workgroup_count[i] = l->maxComputeWorkGroupCount[i];
    c->max_compute_workgroup_size[i] = l->maxComputeWorkGroupSize[i];
  }
  c->max_compute_workgroup_invocations = l->maxComputeWorkGroupInvocations;
  c->max_compute_shared_memory_size = l->maxComputeSharedMemorySize;
  c->max_storage_buffer_range = l->maxStorageBufferRange;
  c->max_memory_allocation_size = m3.maxMemoryAllocationSize;
  c->min_storage_buffer_offset_alignment = l->minStorageBufferOffsetAlignment;
  c->max_per_stage_descriptor_storage_buffers = l->maxPerStageDescriptorStorageBuffers;
  c->max_push_constants_size = l->maxPushConstantsSize;
  c->max_bound_descriptor_sets = l->maxBoundDescriptorSets;
  c->min_texel_buffer_offset_alignment = l->minTexelBufferOffsetAlignment;
  c->max_texel_buffer_elements = l->maxTexelBufferElements;
  c->max_per_stage_descriptor_sampled_images = l->maxPerStageDescriptorSampledImages;
  if (d->ifn.vkGetPhysicalDeviceFormatProperties) {
    VkFormatProperties format;
    d->ifn.vkGetPhysicalDeviceFormatProperties(d->physical_device, VK_FORMAT_R32G32B32A32_UINT, &format);
    c->texel_buffer_rgba32ui = (format.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
    d->ifn.vkGetPhysicalDeviceFormatProperties(d->physical_device, VK_FORMAT_R32_UINT, &format);
    c->texel_buffer_r32ui = (format.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  }
  d->non_coherent_atom_size = l->nonCoherentAtomSize ? l->nonCoherentAtomSize : 1;
  c->signed_zero_inf_nan_preserve_float16 = float_controls && fc.shaderSignedZeroInfNanPreserveFloat16;
  c->signed_zero_inf_nan_preserve_float32 = float_controls && fc.shaderSignedZeroInfNanPreserveFloat32;
  c->signed_zero_inf_nan_preserve_float64 = float_controls && fc.shaderSignedZeroInfNanPreserveFloat64;
}

/* Queries features; creates the logical device unless external. */
static vkhlo_status_t create_logical_device(vkrt_device_t *d) {
  VkPhysicalDeviceProperties props;
  d->ifn.vkGetPhysicalDeviceProperties(d->physical_device, &props);
  d->api_version = usable_api(d, &props);
  bool api12 = d->api_version >= VK_API_VERSION_1_2;

  VkExtensionProperties *exts = NULL;
  uint32_t ext_count = 0;
  VKHLO_RETURN_IF_ERROR(device_extensions(d, d->physical_device, &exts, &ext_count));
  bool has_8bit = !api12 && has_extension(exts, ext_count, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  bool has_f16i8 = !api12 && has_extension(exts, ext_count, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  /* On 1.1 the extension is enabled below; an external 1.1 device may not
   * have it enabled, so float controls count only from 1.2 there. */
  bool has_float_controls =
      !api12 && !d->external &&
      has_extension(exts, ext_count, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
  /* conditional rendering batches while loops' iterations (api/execute.c);
   * only on a device vkrt creates (an external one may lack it) */
  bool has_cr = !d->external && !d->no_conditional_rendering &&
                has_extension(exts, ext_count, VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME);
  vkhlo_free(d->allocator, exts);

  feature_set_t have, want;
  memset(&have, 0, sizeof have);
  memset(&want, 0, sizeof want);
  chain_features(&have, api12, has_8bit, has_f16i8, has_cr);
  d->ifn.vkGetPhysicalDeviceFeatures2(d->physical_device, &have.f2);
  chain_features(&want, api12, has_8bit, has_f16i8, has_cr);
  select_features(&have, &want);
  caps_from_features(&d->caps, &want, api12);
  d->caps.conditional_rendering = has_cr && want.cr.conditionalRendering;
  caps_from_properties(d, api12 || has_float_controls);
  d->ifn.vkGetPhysicalDeviceMemoryProperties(d->physical_device, &d->memory_properties);
  if (d->external) return NULL;

  int family = compute_queue_family(d, d->physical_device);
  if (family < 0)
    return vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE, "device %s has no compute queue",
                             props.deviceName);
  d->queue_family_index = (uint32_t)family;
  const char *enabled[4];
  uint32_t enabled_count = 0;
  if (d->caps.conditional_rendering) enabled[enabled_count++] = VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME;
  if (has_float_controls) enabled[enabled_count++] = VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME;
  if (has_8bit && (want.s8.storageBuffer8BitAccess || want.s8.uniformAndStorageBuffer8BitAccess))
    enabled[enabled_count++] = VK_KHR_8BIT_STORAGE_EXTENSION_NAME;
  if (has_f16i8 && (want.f16i8.shaderInt8 || want.f16i8.shaderFloat16))
    enabled[enabled_count++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = d->queue_family_index,
      .queueCount = 1,
      .pQueuePriorities = &priority,
  };
  VkDeviceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = &want.f2,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &queue_info,
      .enabledExtensionCount = enabled_count,
      .ppEnabledExtensionNames = enabled_count ? enabled : NULL,
  };
  VkResult r = d->ifn.vkCreateDevice(d->physical_device, &info, d->alloc, &d->device);
  if (r != VK_SUCCESS) {
    d->device = VK_NULL_HANDLE;
    return vkrt_vk_status("vkCreateDevice", r);
  }
  return NULL;
}

/* ---- public API --------------------------------------------------------- */

vkhlo_status_t vkrt_enumerate_devices(vkrt_device_info_t **out_infos, int *out_count) {
  *out_infos = NULL;
  *out_count = 0;
  vkrt_device_t *d = vkhlo_calloc(NULL, 1, sizeof *d);
  if (!d) return VKHLO_NO_MEMORY();
  vkhlo_status_t s = load_loader(NULL, &d->ifn.vkGetInstanceProcAddr);
  if (!s) s = create_instance(d, false);
  if (!s) s = load_instance_fns(d);
  VkPhysicalDevice *pds = NULL;
  uint32_t count = 0;
  if (!s) s = physical_devices(d, &pds, &count);
  vkrt_device_info_t *infos = NULL;
  if (!s) {
    infos = vkhlo_calloc(NULL, count ? count : 1, sizeof *infos);
    if (!infos) s = VKHLO_NO_MEMORY();
  }
  if (!s) {
    for (uint32_t i = 0; i < count; i++) fill_info(d, pds[i], &infos[i]);
    *out_infos = infos;
    *out_count = (int)count;
  }
  vkhlo_free(NULL, pds);
  if (d->instance && d->ifn.vkDestroyInstance) d->ifn.vkDestroyInstance(d->instance, d->alloc);
  vkhlo_free(NULL, d);
  return s;
}

static vkhlo_status_t create_device_objects(vkrt_device_t *d) {
  /* volkLoadDeviceTable fetches through volk's global vkGetDeviceProcAddr,
   * which volkLoadInstanceOnly sets for this instance. */
  volkLoadInstanceOnly(d->instance);
  volkLoadDeviceTable(&d->vk, d->device);
  if (!d->vk.vkCreateBuffer || !d->vk.vkCmdDispatch || !d->vk.vkQueueSubmit)
    return vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE, "could not load Vulkan device entry points");
  if (!d->queue) d->vk.vkGetDeviceQueue(d->device, d->queue_family_index, 0, &d->queue);

  VkCommandPoolCreateInfo pool_info = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
      .queueFamilyIndex = d->queue_family_index,
  };
  VkResult r = d->vk.vkCreateCommandPool(d->device, &pool_info, d->alloc, &d->command_pool);
  if (r != VK_SUCCESS) {
    d->command_pool = VK_NULL_HANDLE;
    return vkrt_vk_status("vkCreateCommandPool", r);
  }
  VkPipelineCacheCreateInfo cache_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  r = d->vk.vkCreatePipelineCache(d->device, &cache_info, d->alloc, &d->pipeline_cache);
  if (r != VK_SUCCESS) {
    d->pipeline_cache = VK_NULL_HANDLE;
    return vkrt_vk_status("vkCreatePipelineCache", r);
  }
  return NULL;
}

vkhlo_status_t vkrt_device_create(const vkrt_device_options_t *options, vkrt_device_t **out_device) {
  *out_device = NULL;
  vkrt_device_options_t defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!options) options = &defaults;

  int external_set = (options->external_instance != NULL) + (options->external_physical_device != NULL) +
                     (options->external_device != NULL) + (options->external_queue != NULL);
  if (external_set != 0 && external_set != 4)
    return VKHLO_INVALID("vkrt_device_create: external_instance, external_physical_device, "
                         "external_device and external_queue must all be set, or none");

  vkrt_device_t *d = vkhlo_calloc(options->allocator, 1, sizeof *d);
  if (!d) return VKHLO_NO_MEMORY();
  d->allocator = options->allocator;
  d->message_fn = options->message_fn;
  d->message_user = options->message_user;
  d->force_staging = options->force_staging;
  d->no_conditional_rendering = options->no_conditional_rendering;
  d->alloc = (const VkAllocationCallbacks *)options->vulkan_allocator;
  d->memory_allocator = options->memory_allocator;
  if (d->memory_allocator.allocate && !d->memory_allocator.free) {
    vkhlo_free(options->allocator, d);
    return VKHLO_INVALID("vkrt_device_create: a memory allocator needs both allocate and free");
  }
  d->external = external_set == 4;

  vkhlo_status_t s = load_loader(options->external_get_instance_proc_addr, &d->ifn.vkGetInstanceProcAddr);
  if (!s && d->external) {
    d->instance = (VkInstance)options->external_instance;
    d->physical_device = (VkPhysicalDevice)options->external_physical_device;
    d->device = (VkDevice)options->external_device;
    d->queue = (VkQueue)options->external_queue;
    d->queue_family_index = options->external_queue_family_index;
    d->api_version = VK_API_VERSION_1_1;
    PFN_vkEnumerateInstanceVersion enumerate_version = (PFN_vkEnumerateInstanceVersion)
        d->ifn.vkGetInstanceProcAddr(NULL, "vkEnumerateInstanceVersion");
    uint32_t v = VK_API_VERSION_1_1;
    if (enumerate_version && enumerate_version(&v) == VK_SUCCESS && version_no_patch(v) > d->api_version)
      d->api_version = version_no_patch(v) > VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : version_no_patch(v);
  } else if (!s) {
    s = create_instance(d, options->enable_validation);
  }
  if (!s) s = load_instance_fns(d);
  if (!s && !d->external && options->enable_validation) {
    if (!d->ifn.vkCreateDebugUtilsMessengerEXT || !d->ifn.vkDestroyDebugUtilsMessengerEXT) {
      s = vkhlo_status_make(VKHLO_STATUS_UNAVAILABLE, "vkCreateDebugUtilsMessengerEXT is missing");
    } else {
      VkDebugUtilsMessengerCreateInfoEXT info = messenger_info(d);
      VkResult r = d->ifn.vkCreateDebugUtilsMessengerEXT(d->instance, &info, d->alloc, &d->messenger);
      if (r != VK_SUCCESS) {
        d->messenger = VK_NULL_HANDLE;
        s = vkrt_vk_status("vkCreateDebugUtilsMessengerEXT", r);
      }
    }
  }
  if (!s && !d->external) s = choose_physical_device(d, options->selector);
  if (!s) {
    fill_info(d, d->physical_device, &d->info);
    s = create_logical_device(d);
  }
  if (!s) s = create_device_objects(d);
  if (s) {
    vkrt_device_destroy(d);
    return s;
  }
  *out_device = d;
  return NULL;
}

void vkrt_device_destroy(vkrt_device_t *d) {
  if (!d) return;
  if (d->device) {
    /* vkhlo's own device only: on the caller's device, every vkrt_cmd and
     * one-shot already waited for its own fence, and the caller's queue
     * may hold the caller's work (never wait for it here). */
    if (!d->external && d->vk.vkDeviceWaitIdle) d->vk.vkDeviceWaitIdle(d->device);
    if (d->pipeline_cache) {
      vkhlo_status_free(vkrt_pipeline_cache_save(d)); /* best effort */
      d->vk.vkDestroyPipelineCache(d->device, d->pipeline_cache, d->alloc);
    }
    vkhlo_free(d->allocator, d->pipeline_cache_path);
    if (d->command_pool) d->vk.vkDestroyCommandPool(d->device, d->command_pool, d->alloc);
    if (!d->external) {
      /* The table may not be loaded yet if creation failed right after
       * vkCreateDevice; fetch vkDestroyDevice directly then. */
      PFN_vkDestroyDevice destroy = d->vk.vkDestroyDevice;
      if (!destroy && d->ifn.vkGetDeviceProcAddr)
        destroy = (PFN_vkDestroyDevice)d->ifn.vkGetDeviceProcAddr(d->device, "vkDestroyDevice");
      if (destroy) destroy(d->device, d->alloc);
    }
  }
  if (d->messenger && d->ifn.vkDestroyDebugUtilsMessengerEXT)
    d->ifn.vkDestroyDebugUtilsMessengerEXT(d->instance, d->messenger, d->alloc);
  if (!d->external && d->instance) {
    PFN_vkDestroyInstance destroy = d->ifn.vkDestroyInstance;
    if (!destroy && d->ifn.vkGetInstanceProcAddr)
      destroy = (PFN_vkDestroyInstance)d->ifn.vkGetInstanceProcAddr(d->instance, "vkDestroyInstance");
    if (destroy) destroy(d->instance, d->alloc);
  }
  vkhlo_free(d->allocator, d);
}

const vkrt_caps_t *vkrt_device_caps(const vkrt_device_t *device) { return &device->caps; }

const vkrt_device_info_t *vkrt_device_info(const vkrt_device_t *device) { return &device->info; }

void vkrt_device_vulkan_handles(const vkrt_device_t *device, vkrt_vulkan_handles_t *out) {
  out->instance = (void *)device->instance;
  out->physical_device = (void *)device->physical_device;
  out->device = (void *)device->device;
  out->queue = (void *)device->queue;
  out->queue_family_index = device->queue_family_index;
  out->get_instance_proc_addr = (void *)(uintptr_t)device->ifn.vkGetInstanceProcAddr;
}

/* ---- one-shot submissions (staging copies) ------------------------------ */

void vkrt_record_host_barrier(vkrt_device_t *d, VkCommandBuffer cb) {
  VkMemoryBarrier barrier = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT,
  };
  d->vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
}

vkhlo_status_t vkrt_device_run_one_shot(vkrt_device_t *d, vkrt_record_fn record, void *user) {
  VkCommandBufferAllocateInfo alloc = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = d->command_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VKRT_CHECK("vkAllocateCommandBuffers", d->vk.vkAllocateCommandBuffers(d->device, &alloc, &cb));
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkCommandBufferBeginInfo begin = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  vkhlo_status_t s = NULL;
  VkResult r = d->vk.vkCreateFence(d->device, &fence_info, d->alloc, &fence);
  if (r != VK_SUCCESS) {
    fence = VK_NULL_HANDLE;
    s = vkrt_vk_status("vkCreateFence", r);
  }
  if (!s && (r = d->vk.vkBeginCommandBuffer(cb, &begin)) != VK_SUCCESS)
    s = vkrt_vk_status("vkBeginCommandBuffer", r);
  if (!s) {
    record(d, cb, user);
    vkrt_record_host_barrier(d, cb);
    if ((r = d->vk.vkEndCommandBuffer(cb)) != VK_SUCCESS) s = vkrt_vk_status("vkEndCommandBuffer", r);
  }
  if (!s) {
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &cb,
    };
    if ((r = d->vk.vkQueueSubmit(d->queue, 1, &submit, fence)) != VK_SUCCESS)
      s = vkrt_vk_status("vkQueueSubmit", r);
    else if ((r = d->vk.vkWaitForFences(d->device, 1, &fence, VK_TRUE, UINT64_MAX)) != VK_SUCCESS)
      s = vkrt_vk_status("vkWaitForFences", r);
  }
  if (fence) d->vk.vkDestroyFence(d->device, fence, d->alloc);
  d->vk.vkFreeCommandBuffers(d->device, d->command_pool, 1, &cb);
  return s;
}
