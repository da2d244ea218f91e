/*
 * Linked into every test program.  Under -fsanitize=address:
 *  - LeakSanitizer uses the project's narrow suppressions (tests/lsan.supp:
 *    allocations inside the Vulkan driver stack only, never vkhlo's own);
 *  - the Vulkan loader dlcloses drivers and layers when an instance is
 *    destroyed, so their one-time allocations would be reported with
 *    "<unknown module>" frames that no suppression can name: the drivers
 *    and layers are pinned with RTLD_NODELETE at start-up so that the
 *    suppressions match them by module.
 * Without ASan this file does nothing.
 */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include <dlfcn.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "suppressions=" VKHLO_SOURCE_DIR "/tests/lsan.supp"; }

__attribute__((constructor)) static void pin_vulkan_libraries(void) {
  static const char *const libraries[] = {
      "libvulkan_lvp.so",          "libVkLayer_khronos_validation.so",
      "libVkLayer_MESA_device_select.so", "libvulkan_intel.so",
      "libvulkan_intel_hasvk.so",  "libvulkan_radeon.so",
  };
  for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++)
    (void)dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}
#endif
