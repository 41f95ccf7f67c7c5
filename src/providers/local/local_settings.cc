#include "providers/local/local_settings.h"

#include <memory>

namespace causeway::local {

EstateKind EstateKindOf() {
  EstateKind k;
  k.name = "local";
  k.cluster_key = "local";
  k.parse_cluster = [](SettingsReader& r) -> std::shared_ptr<const KindSettings> {
    if (!r.CheckKeys({"output_dir"})) return nullptr;
    auto s = std::make_shared<LocalSettings>();
    s->output_dir = r.String("output_dir", true);
    return s;
  };
  k.cluster_block_required = "a cluster of a local provider needs local: {output_dir}";
  k.honours.git_workdir = k.honours.storage_paths = k.honours.buckets = true;
  k.honours.backend = "the local executor";
  return k;
}

}  // namespace causeway::local
