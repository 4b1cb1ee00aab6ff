// GGUF parsing: a bounds-checked cursor walks the header, metadata and tensor infos; nothing is
// allocated from a count before that count is checked against the bytes left in the file.
#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/checked_math.h"

namespace workbench {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kMaxDims = 4;
constexpr uint64_t kMaxStringBytes = 1u << 30;

uint64_t scalar_size(GgufType t) {
    switch (t) {
        case GgufType::uint8: case GgufType::int8: case GgufType::boolean: return 1;
        case GgufType::uint16: case GgufType::int16: return 2;
        case GgufType::uint32: case GgufType::int32: case GgufType::float32: return 4;
        case GgufType::uint64: case GgufType::int64: case GgufType::float64: return 8;
        default: return 0;
    }
}

bool valid_type(uint32_t raw) { return raw <= static_cast<uint32_t>(GgufType::float64); }

// Reads little-endian values from [pos, end), failing instead of reading past the end.
class Cursor {
public:
    Cursor(const uint8_t* base, uint64_t size) : base_(base), size_(size) {}
    uint64_t pos() const { return pos_; }
    uint64_t left() const { return size_ - pos_; }

    template <typename T>
    bool read(T& out) {
        if (left() < sizeof(T)) return false;
        std::memcpy(&out, base_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return true;
    }
    bool read_string(std::string_view& out) {
        uint64_t len;
        if (!read(len) || len > left() || len > kMaxStringBytes) return false;
        out = std::string_view(reinterpret_cast<const char*>(base_ + pos_), len);
        pos_ += len;
        return true;
    }
    bool skip(uint64_t n) {
        if (n > left()) return false;
        pos_ += n;
        return true;
    }
    const uint8_t* here() const { return base_ + pos_; }

private:
    const uint8_t* base_;
    uint64_t size_;
    uint64_t pos_ = 0;
};

std::string at(const std::string& file, uint64_t offset) {
    std::ostringstream s;
    s << file << ": at byte " << offset << ": ";
    return s.str();
}

}  // namespace

const char* gguf_type_name(GgufType type) {
    switch (type) {
        case GgufType::uint8: return "uint8";
        case GgufType::int8: return "int8";
        case GgufType::uint16: return "uint16";
        case GgufType::int16: return "int16";
        case GgufType::uint32: return "uint32";
        case GgufType::int32: return "int32";
        case GgufType::float32: return "float32";
        case GgufType::boolean: return "bool";
        case GgufType::string: return "string";
        case GgufType::array: return "array";
        case GgufType::uint64: return "uint64";
        case GgufType::int64: return "int64";
        case GgufType::float64: return "float64";
    }
    return "unknown";
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        auto code = err == ENOENT ? StatusCode::not_found : StatusCode::io_error;
        return error(code, path + ": cannot open: " + std::strerror(err));
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return error(StatusCode::io_error, path + ": not a regular file");
    }
    if (st.st_size == 0) {
        ::close(fd);
        return error(StatusCode::invalid_file, path + ": file is empty (expected a GGUF model)");
    }
    void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return error(StatusCode::io_error, path + ": mmap failed: " + std::strerror(errno));

    std::unique_ptr<GgufFile> file(new GgufFile());
    file->path_ = path;
    file->mapping_ = map;
    file->base_ = static_cast<const uint8_t*>(map);
    file->size_ = static_cast<uint64_t>(st.st_size);
    WB_RETURN_IF_ERROR(file->parse());
    return file;
}

Result<std::unique_ptr<GgufFile>> GgufFile::from_memory(std::span<const uint8_t> bytes, std::string name) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->path_ = std::move(name);
    file->base_ = bytes.data();
    file->size_ = bytes.size();
    WB_RETURN_IF_ERROR(file->parse());
    return file;
}

GgufFile::~GgufFile() {
    if (mapping_) munmap(mapping_, static_cast<size_t>(size_));
}

Status GgufFile::parse() {
    Cursor c(base_, size_);
    uint32_t magic = 0;
    if (!c.read(magic) || magic != kMagic) {
        std::ostringstream s;
        s << path_ << ": not a GGUF file (magic 0x" << std::hex << magic << ", expected 0x" << kMagic << " \"GGUF\")";
        return error(StatusCode::invalid_file, s.str());
    }
    if (!c.read(version_)) return error(StatusCode::invalid_file, path_ + ": truncated header (no version)");
    if (version_ != 2 && version_ != 3)
        return error(StatusCode::unsupported, path_ + ": GGUF version " + std::to_string(version_) + " is not supported (expected 2 or 3)");

    uint64_t n_tensors = 0, n_kv = 0;
    if (!c.read(n_tensors) || !c.read(n_kv)) return error(StatusCode::invalid_file, path_ + ": truncated header (tensor/kv counts)");
    // Each kv needs at least 8 (key len) + 4 (type) + 1 bytes; each tensor info at least 8+4+8+4+8.
    if (n_kv > c.left() / 13)
        return error(StatusCode::invalid_file, at(path_, c.pos()) + "metadata count " + std::to_string(n_kv) + " is larger than the file can hold");
    if (n_tensors > c.left() / 32)
        return error(StatusCode::invalid_file, at(path_, c.pos()) + "tensor count " + std::to_string(n_tensors) + " is larger than the file can hold");

    for (uint64_t i = 0; i < n_kv; ++i) {
        uint64_t key_pos = c.pos();
        std::string_view key;
        if (!c.read_string(key))
            return error(StatusCode::invalid_file, at(path_, key_pos) + "truncated or oversized key of metadata entry " + std::to_string(i));
        uint32_t raw_type;
        if (!c.read(raw_type)) return error(StatusCode::invalid_file, at(path_, c.pos()) + "truncated type of key '" + std::string(key) + "'");
        if (!valid_type(raw_type))
            return error(StatusCode::invalid_file, at(path_, c.pos() - 4) + "key '" + std::string(key) + "' has unknown value type " + std::to_string(raw_type));
        GgufValue v;
        v.type = static_cast<GgufType>(raw_type);
        const std::string where = at(path_, c.pos()) + "key '" + std::string(key) + "': ";
        if (v.type == GgufType::string) {
            if (!c.read_string(v.str)) return error(StatusCode::invalid_file, where + "truncated or oversized string value");
        } else if (v.type == GgufType::array) {
            uint32_t raw_elem;
            if (!c.read(raw_elem) || !c.read(v.array_count)) return error(StatusCode::invalid_file, where + "truncated array header");
            if (!valid_type(raw_elem) || raw_elem == static_cast<uint32_t>(GgufType::array))
                return error(StatusCode::invalid_file, where + "array element type " + std::to_string(raw_elem) + " is not supported");
            v.array_type = static_cast<GgufType>(raw_elem);
            v.array_data = c.here();
            if (v.array_type == GgufType::string) {
                if (v.array_count > c.left() / 8)
                    return error(StatusCode::invalid_file, where + "array of " + std::to_string(v.array_count) + " strings is larger than the file");
                for (uint64_t k = 0; k < v.array_count; ++k) {
                    std::string_view s;
                    if (!c.read_string(s))
                        return error(StatusCode::invalid_file, where + "string " + std::to_string(k) + " of the array is truncated");
                }
            } else {
                uint64_t bytes;
                if (!checked_mul(v.array_count, scalar_size(v.array_type), bytes) || !c.skip(bytes))
                    return error(StatusCode::invalid_file, where + "array of " + std::to_string(v.array_count) + " " +
                                                               gguf_type_name(v.array_type) + " runs past the end of the file");
            }
        } else {
            const uint8_t* p = c.here();
            if (!c.skip(scalar_size(v.type))) return error(StatusCode::invalid_file, where + "truncated value");
            switch (v.type) {
                case GgufType::uint8: v.u = p[0]; break;
                case GgufType::boolean: v.u = p[0] != 0; break;
                case GgufType::int8: v.i = static_cast<int8_t>(p[0]); break;
                case GgufType::uint16: { uint16_t x; std::memcpy(&x, p, 2); v.u = x; break; }
                case GgufType::int16: { int16_t x; std::memcpy(&x, p, 2); v.i = x; break; }
                case GgufType::uint32: { uint32_t x; std::memcpy(&x, p, 4); v.u = x; break; }
                case GgufType::int32: { int32_t x; std::memcpy(&x, p, 4); v.i = x; break; }
                case GgufType::float32: { float x; std::memcpy(&x, p, 4); v.f = x; break; }
                case GgufType::uint64: std::memcpy(&v.u, p, 8); break;
                case GgufType::int64: std::memcpy(&v.i, p, 8); break;
                case GgufType::float64: std::memcpy(&v.f, p, 8); break;
                default: break;
            }
        }
        if (!metadata_.emplace(std::string(key), v).second)
            return error(StatusCode::invalid_file, at(path_, key_pos) + "duplicate metadata key '" + std::string(key) + "'");
    }

    if (auto it = metadata_.find("general.alignment"); it != metadata_.end()) {
        const GgufValue& a = it->second;
        uint64_t value = a.type == GgufType::uint32 || a.type == GgufType::uint64 ? a.u : 0;
        if (value == 0 || (value & (value - 1)) != 0 || value > (1u << 20))
            return error(StatusCode::invalid_file, path_ + ": general.alignment is " + std::to_string(value) + " (" +
                                                       gguf_type_name(a.type) + "), expected a power of two up to 1 MiB");
        alignment_ = value;
    }

    tensors_.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
        uint64_t info_pos = c.pos();
        GgufTensorInfo t;
        std::string_view name;
        if (!c.read_string(name))
            return error(StatusCode::invalid_file, at(path_, info_pos) + "truncated name of tensor " + std::to_string(i));
        t.name = std::string(name);
        const std::string where = at(path_, info_pos) + "tensor '" + t.name + "': ";
        uint32_t n_dims;
        if (!c.read(n_dims)) return error(StatusCode::invalid_file, where + "truncated dimension count");
        if (n_dims == 0 || n_dims > kMaxDims)
            return error(StatusCode::invalid_file, where + "has " + std::to_string(n_dims) + " dimensions, expected 1 to 4");
        t.n_elements = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            uint64_t ne;
            if (!c.read(ne)) return error(StatusCode::invalid_file, where + "truncated shape");
            if (ne == 0 || !checked_mul(t.n_elements, ne, t.n_elements) || t.n_elements > (uint64_t{1} << 50))
                return error(StatusCode::invalid_file, where + "dimension " + std::to_string(d) + " = " + std::to_string(ne) + " is zero or absurd");
            t.shape.push_back(ne);
        }
        uint32_t raw_dtype;
        if (!c.read(raw_dtype) || !c.read(t.offset)) return error(StatusCode::invalid_file, where + "truncated type/offset");
        auto traits = dtype_traits(raw_dtype);
        if (!traits)
            return error(StatusCode::unsupported, where + "element type " + std::to_string(raw_dtype) + " is unknown to this engine");
        t.type = traits->type;
        if (t.shape[0] % traits->block_elements != 0)
            return error(StatusCode::invalid_file, where + "row length " + std::to_string(t.shape[0]) + " is not a multiple of the " +
                                                       std::string(traits->name) + " block size " + std::to_string(traits->block_elements));
        if (!checked_mul(t.n_elements / traits->block_elements, traits->block_bytes, t.n_bytes))
            return error(StatusCode::invalid_file, where + "byte size overflows");
        if (t.offset % alignment_ != 0)
            return error(StatusCode::invalid_file, where + "data offset " + std::to_string(t.offset) + " is not aligned to " + std::to_string(alignment_));
        tensors_.push_back(std::move(t));
    }

    if (!checked_align_up(c.pos(), alignment_, data_offset_))
        return error(StatusCode::invalid_file, path_ + ": data offset overflows");
    // A file with no tensors (a vocab-only GGUF) may end right after the header.
    if (!tensors_.empty() && data_offset_ > size_)
        return error(StatusCode::invalid_file, path_ + ": truncated before the tensor data (data starts at byte " +
                                                   std::to_string(data_offset_) + ", file has " + std::to_string(size_) + ")");
    for (auto& t : tensors_) {
        uint64_t begin, end;
        if (!checked_add(data_offset_, t.offset, begin) || !checked_add(begin, t.n_bytes, end) || end > size_) {
            return error(StatusCode::invalid_file, path_ + ": tensor '" + t.name + "' data [" + std::to_string(t.offset) + ", +" +
                                                       std::to_string(t.n_bytes) + ") runs past the end of the file (" +
                                                       std::to_string(size_) + " bytes): the file is truncated");
        }
        t.data = base_ + begin;
    }
    // Duplicate tensor names would make lookups ambiguous.
    std::map<std::string_view, int> seen;
    for (const auto& t : tensors_)
        if (++seen[t.name] > 1) return error(StatusCode::invalid_file, path_ + ": duplicate tensor name '" + t.name + "'");
    return Status::ok_status();
}

void GgufFile::release_pages(const uint8_t* data, uint64_t n_bytes) const {
    if (!mapping_ || data < base_ || data + n_bytes > base_ + size_) return;
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t begin = (static_cast<uint64_t>(data - base_) + page - 1) / page * page;
    const uint64_t end = static_cast<uint64_t>(data - base_ + n_bytes) / page * page;
    if (end > begin) madvise(const_cast<uint8_t*>(base_) + begin, end - begin, MADV_DONTNEED);
}

const GgufValue* GgufFile::find(std::string_view key) const {
    auto it = metadata_.find(key);
    return it == metadata_.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
    for (const auto& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

}  // namespace workbench
