#include "dragon/bench/eager_plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace dragon::bench {
namespace {

constexpr const char* kPluginName = "libdragon_eager_torch.so";
constexpr const char* kEntryPoint = "dragon_eager_baselines_v1";

std::filesystem::path executable_dir() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : self.parent_path();
}

std::vector<std::string> candidates() {
  if (const char* explicit_path = std::getenv("DRAGON_EAGER_PLUGIN"); explicit_path && *explicit_path) {
    return {explicit_path};
  }
  std::vector<std::string> paths;
  if (std::filesystem::path dir = executable_dir(); !dir.empty()) {
    paths.push_back((dir / kPluginName).string());
    // Programs one folder down in a build tree (bench/, tests/...) and installed layouts.
    paths.push_back((dir.parent_path() / kPluginName).string());
    paths.push_back((dir.parent_path() / "lib" / kPluginName).string());
  }
  return paths;
}

EagerPlugin load_installed_plugin() {
  EagerPlugin plugin;
  std::string tried;
  for (const std::string& path : candidates()) {
    plugin = load_eager_plugin_from(path);
    if (plugin.baselines) return plugin;
    tried += plugin.why_not + "; ";
  }
  plugin.why_not = tried.empty() ? "no place to look for the plugin (cannot read /proc/self/exe); " : tried;
  plugin.why_not += "the eager baselines are built only where CMake finds libtorch (Torch_DIR)";
  return plugin;
}

}  // namespace

EagerPlugin load_eager_plugin_from(const std::string& path) {
  EagerPlugin plugin;
  plugin.path = path;
  if (!std::filesystem::exists(path)) {
    plugin.why_not = path + ": not there";
    return plugin;
  }
  // RTLD_LOCAL: libtorch's symbols stay the plugin's own.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    plugin.why_not = path + ": " + ::dlerror();
    return plugin;
  }
  auto* entry = reinterpret_cast<EagerBaselines* (*)()>(::dlsym(handle, kEntryPoint));
  if (!entry) {
    plugin.why_not = path + ": no " + kEntryPoint + " (not this plugin, or one of another version)";
    ::dlclose(handle);
    return plugin;
  }
  plugin.baselines = entry();
  return plugin;
}

const EagerPlugin& eager_plugin() {
  static const EagerPlugin plugin = load_installed_plugin();
  return plugin;
}

}  // namespace dragon::bench
