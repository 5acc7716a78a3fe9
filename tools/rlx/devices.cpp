// rlx devices: every device RLX was built with, whether it can run here, and how many op
// kinds it runs natively.
#include <cstdio>

#include "commands.h"
#include "json.h"
#include "rlx/session.h"

namespace rlx::cli {

int cmd_devices(Args& args) {
  bool json = args.flag("json");
  args.finish();
  std::vector<DeviceInfo> devs = devices();
  if (json) {
    std::vector<std::string> items;
    for (const auto& d : devs)
      items.push_back(cat("{\"name\":", json_quote(d.name), ",\"available\":", json_bool(d.available), ",\"native_ops\":", d.native_ops,
                          ",\"description\":", json_quote(d.description), ",\"reason\":", json_quote(d.reason),
                          ",\"status\":", json_quote(d.status), "}"));
    std::printf("{\"devices\":%s}\n", json_array(items).c_str());
    return 0;
  }
  std::printf("%-12s %-10s %-32s %-11s %s\n", "device", "available", "status", "native ops", "description");
  for (const auto& d : devs)
    std::printf("%-12s %-10s %-32s %-11d %s%s\n", d.name.c_str(), d.available ? "yes" : "no", d.status.c_str(), d.native_ops, d.description.c_str(),
                d.available ? "" : (" — " + d.reason).c_str());
  return 0;
}

}  // namespace rlx::cli
