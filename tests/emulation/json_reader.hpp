// A small JSON reader for tests that load what the emulation wrote (traces). Strict: rejects
// trailing commas, bare NaN, unterminated strings; throws std::runtime_error naming the offset.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kccl::test {

struct Json {
    enum class Type { null, boolean, number, string, array, object } type = Type::null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<Json> arr;
    std::map<std::string, Json> obj;

    bool has(const std::string& k) const { return type == Type::object && obj.count(k); }
    const Json& at(const std::string& k) const {
        if (!has(k)) throw std::runtime_error("json: no member '" + k + "'");
        return obj.at(k);
    }
    const std::string& s() const {
        if (type != Type::string) throw std::runtime_error("json: not a string");
        return str;
    }
    double n() const {
        if (type != Type::number) throw std::runtime_error("json: not a number");
        return num;
    }
};

class JsonReader {
public:
    explicit JsonReader(std::string_view text) : t_(text) {}
    Json parse() {
        Json v = value();
        ws();
        if (i_ != t_.size()) fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("json: " + what + " at offset " + std::to_string(i_));
    }
    void ws() {
        while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
    }
    char peek() {
        ws();
        if (i_ >= t_.size()) fail("unexpected end");
        return t_[i_];
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++i_;
    }
    bool literal(std::string_view w) {
        if (t_.substr(i_, w.size()) == w) {
            i_ += w.size();
            return true;
        }
        return false;
    }
    Json value() {
        Json v;
        const char c = peek();
        if (c == '{') {
            v.type = Json::Type::object;
            ++i_;
            if (peek() == '}') {
                ++i_;
                return v;
            }
            for (;;) {
                if (peek() != '"') fail("expected a member name");
                std::string k = string();
                expect(':');
                v.obj[k] = value();
                if (peek() == ',') {
                    ++i_;
                    continue;
                }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.type = Json::Type::array;
            ++i_;
            if (peek() == ']') {
                ++i_;
                return v;
            }
            for (;;) {
                v.arr.push_back(value());
                if (peek() == ',') {
                    ++i_;
                    continue;
                }
                expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.type = Json::Type::string;
            v.str = string();
            return v;
        }
        if (literal("true")) {
            v.type = Json::Type::boolean;
            v.b = true;
            return v;
        }
        if (literal("false")) {
            v.type = Json::Type::boolean;
            return v;
        }
        if (literal("null")) return v;
        if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
            const size_t start = i_;
            if (t_[i_] == '-') ++i_;
            while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' ||
                                      t_[i_] == 'e' || t_[i_] == 'E' || t_[i_] == '+' || t_[i_] == '-'))
                ++i_;
            const std::string num(t_.substr(start, i_ - start));
            char* end = nullptr;
            v.type = Json::Type::number;
            v.num = std::strtod(num.c_str(), &end);
            if (end != num.c_str() + num.size()) fail("bad number '" + num + "'");
            return v;
        }
        fail(std::string("unexpected character '") + c + "'");
    }
    std::string string() {
        expect('"');
        std::string out;
        while (i_ < t_.size() && t_[i_] != '"') {
            char c = t_[i_++];
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
            if (c == '\\') {
                if (i_ >= t_.size()) fail("unterminated escape");
                const char e = t_[i_++];
                switch (e) {
                    case '"': out += '"'; break;
                    case '\\': out += '\\'; break;
                    case '/': out += '/'; break;
                    case 'n': out += '\n'; break;
                    case 't': out += '\t'; break;
                    case 'r': out += '\r'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'u': {
                        if (i_ + 4 > t_.size()) fail("short \\u escape");
                        const unsigned long cp = std::strtoul(std::string(t_.substr(i_, 4)).c_str(), nullptr, 16);
                        i_ += 4;
                        if (cp < 0x80) out += char(cp);
                        else out += '?';  // tests only need ASCII
                        break;
                    }
                    default: fail("bad escape");
                }
            } else {
                out += c;
            }
        }
        if (i_ >= t_.size()) fail("unterminated string");
        ++i_;
        return out;
    }

    std::string_view t_;
    size_t i_ = 0;
};

inline Json parse_json(std::string_view text) { return JsonReader(text).parse(); }

}  // namespace kccl::test
