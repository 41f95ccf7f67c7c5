#include "cli/commands.h"

int main(int argc, char** argv) { return causeway::cli::Main(argc, argv); }
