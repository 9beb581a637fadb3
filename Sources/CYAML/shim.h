// libyaml (Debian: libyaml-dev): the YAML 1.1 parser whose events BeaconConfig composes into
// nodes that keep their line and column.
#include <yaml.h>
