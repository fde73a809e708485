#include "cli/resource_options.h"

namespace pipetwin {

void add_resource_options(CLI::App* command, ResourceOptions* options) {
  command
      ->add_option("--max-instructions", options->max_instructions,
                   "refuse scenarios whose Program would have more instructions")
      ->default_val(options->max_instructions)
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--max-memory", options->max_memory_gib,
                   "refuse scenarios whose simulation would need more memory (GiB)")
      ->default_val(options->max_memory_gib)
      ->check(CLI::PositiveNumber);
}

}  // namespace pipetwin
