// workbench-cli's flags: declared per subcommand as FlagSpec tables (which also print --help),
// parsed by CLI11; anything unknown or malformed is reported in one line naming the flag and the
// problem. Values are read back as text and converted with range checks by the typed getters.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wbcli {

struct FlagSpec {
    std::string long_name;    // "--threads"
    std::string short_name;   // "-t" or ""
    bool takes_value = true;
    std::string help;         // "N  threads (default: one per core)"
};

class Args {
public:
    // Parses argv[first..] with CLI11 ("--name value", "--name=value", "-n value"; the last of a
    // repeated flag wins). Returns an error message, or empty on success.
    std::string parse(int argc, char** argv, int first, const std::vector<FlagSpec>& specs);

    bool has(const std::string& long_name) const { return values_.count(long_name) > 0; }
    void set(const std::string& long_name, const std::string& value) { values_[long_name] = value; }
    std::string get(const std::string& long_name, const std::string& fallback = "") const;
    // Typed getters: the error (naming the flag and the bad text) goes to `err`.
    int get_int(const std::string& long_name, int fallback, int min, int max, std::string& err) const;
    double get_double(const std::string& long_name, double fallback, double min, double max, std::string& err) const;
    unsigned long long get_u64(const std::string& long_name, unsigned long long fallback, std::string& err) const;

private:
    std::map<std::string, std::string> values_;
};

std::string usage_text(const std::string& command, const std::string& synopsis, const std::vector<FlagSpec>& specs);

// Flags every subcommand takes.
std::vector<FlagSpec> common_flags();
// Flags of the commands that run the model: weights, attention variant, KV types and budget.
std::vector<FlagSpec> engine_flags();
// Appends engine_flags() to a command's own flags.
void add_engine_flags(std::vector<FlagSpec>& flags);

}  // namespace wbcli
