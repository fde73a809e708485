#include "cli/cli_app.h"

int main(int argc, char** argv) { return pipetwin::run_cli(argc, argv); }
