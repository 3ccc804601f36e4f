// A folder of this test process for the files its tests write (configs,
// logs, models): under the system's temp folder ($TMPDIR), created on first
// use and removed with everything in it when the process exits, so that a
// test run leaves nothing behind, whichever test wrote what.
#pragma once

#include <filesystem>
#include <string>

namespace loom::testing {

const std::filesystem::path& scratch_dir();
// scratch_dir() / name, with no file of that name there yet.
std::string scratch_path(const std::string& name);
// scratch_dir() / name holding exactly `bytes`; returns the path.
std::string write_scratch_file(const std::string& name, const std::string& bytes);

}  // namespace loom::testing
