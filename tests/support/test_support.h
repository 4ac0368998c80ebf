// Helpers shared by Baton's Qt Test suites.
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QStandardPaths>
#include <QString>

#include <baton/engine/model.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace baton::test {

// ../shared beside the checkout (fixtures, corpus, tokenizers). Tests that need it
// fail with a message naming the missing path: they never skip silently.
inline QString sharedDir() {
    return QStringLiteral(BATON_SHARED_DIR);
}
inline QString sharedPath(const QString& relative) {
    return sharedDir() + "/" + relative;
}
inline QString fixtureDir() {
    return sharedPath("fixtures/gpt2-tiny-random");
}
inline std::string fixture() {
    return fixtureDir().toStdString();
}
inline std::string gpt2TokenizerDir() {
    return sharedPath("tokenizers/gpt2").toStdString();
}
// The model the checkout ships (SentencePiece tokenizer, recurrent, T 128).
inline QString bundledModelDir() {
    return QStringLiteral(BATON_SOURCE_DIR "/resources/models/baton-mini");
}

inline QString missingMessage(const QString& path) {
    return "missing shared test data: " + path +
           " (the tests read ../shared beside the checkout; set BATON_SHARED_DIR at configure)";
}

// Call from initTestCase(): test mode for QStandardPaths (and so for QSettings, whose
// file then lives under ~/.qttest), settings left by an earlier run cleared, all cores
// for LibTorch (a suite built TORCH_FREE has no LibTorch to set up).
inline void initTestProcess() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
#ifndef BATON_TEST_TORCH_FREE
    engine::initializeRuntime();
#endif
}

inline QByteArray readFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

inline bool writeFile(const QString& path, const QByteArray& data) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(data) == data.size();
}

inline QJsonObject readJsonObject(const QString& path) {
    return QJsonDocument::fromJson(readFile(path)).object();
}

// Copies every file of a folder (not recursive).
inline bool copyFolder(const QString& from, const QString& to) {
    QDir().mkpath(to);
    const auto names = QDir(from).entryList(QDir::Files);
    for (const auto& n : names) {
        QFile::remove(to + "/" + n);
        if (!QFile::copy(from + "/" + n, to + "/" + n))
            return false;
        QFile(to + "/" + n).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    }
    return true;
}

// IEEE half and bfloat16 from float, round to nearest even (written here, not
// taken from the engine, so conversions are checked against an independent path).
inline uint16_t floatToBf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t rounding = 0x7FFF + ((x >> 16) & 1);
    return static_cast<uint16_t>((x + rounding) >> 16);
}

inline uint16_t floatToHalf(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    const int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = x & 0x7FFFFF;
    if (exp >= 31)
        return static_cast<uint16_t>(sign | 0x7C00); // overflow to infinity
    if (exp <= 0) {
        if (exp < -10)
            return static_cast<uint16_t>(sign);
        mant |= 0x800000;
        const int shift = 14 - exp;
        uint32_t half = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            ++half;
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1FFF;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        ++half; // may carry into the exponent, which is the right result
    return static_cast<uint16_t>(sign | half);
}

} // namespace baton::test
