// The Generation panel made from the sampler settings table: a control for every
// setting with the table's range and help, stored values shown and saved back as they
// are (beyond the ranges the panel once had), the presets including Min-p + DRY, and the
// "More samplers" group shown on demand.
#include "generation_settings_panel.h"
#include "test_support.h"

#include <baton/engine/sampler_settings.h>
#include <baton/story/settings.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QtTest>

using namespace baton;

class TestGenerationPanel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { baton::test::initTestProcess(); }

    void everySettingHasItsControl() {
        ui::GenerationSettingsPanel panel;
        for (const engine::SamplerSetting& s : engine::samplerSettings()) {
            auto* w = panel.findChild<QWidget*>(QString::fromLatin1(s.key));
            QVERIFY2(w, s.key);
            QCOMPARE(w->toolTip(), QString::fromLatin1(s.help));
            if (auto* spin = qobject_cast<QDoubleSpinBox*>(w))
                QCOMPARE(spin->maximum(), s.hi);
            if (auto* spin = qobject_cast<QSpinBox*>(w))
                QCOMPARE(spin->maximum(), int(s.hi));
        }
    }

    // A story's settings beyond what the panel once offered come back unchanged.
    void storedValuesAreNeverClamped() {
        ui::GenerationSettingsPanel panel;
        story::StorySettings s = story::defaultSettings();
        s.sampling.temperature = 5;
        s.sampling.topK = 5000;
        s.sampling.repetitionPenalty = 3;
        s.sampling.maxTokens = 500000;
        s.sampling.seed = uint64_t(1) << 40;
        s.fixedSeed = true;
        s.sampling.minP = 0.07;
        s.sampling.dryMultiplier = 0.8;
        s.sampling.mirostat = 2;
        s.sampling.temperatureLast = 1;
        s.sampling.xtcProbability = 0.25;
        s.sampling.topA = 0.0005; // finer than the spin box's three decimals
        s.sampling.topP = 0.0004; // below the spin box's minimum (0.001)
        s.sampling.samplerOrder = {"top_k", "min_p", "temperature"};
        s.sampling.bannedPhrases = {"shivers down her spine", "Mr. Darcy"};
        s.sampling.textBias = {{" Darcy", -5.f}, {"a=b", 2.5f}};
        panel.load(s);
        QCOMPARE(panel.findChild<QLineEdit*>("samplerOrder")->text(),
                 QString("top_k, min_p, temperature"));
        const story::StorySettings back = panel.settings();
        QCOMPARE(back.sampling.temperature, 5.0);
        QCOMPARE(back.sampling.topK, 5000);
        QCOMPARE(back.sampling.repetitionPenalty, 3.0);
        QCOMPARE(back.sampling.maxTokens, 500000);
        QCOMPARE(back.sampling.seed, uint64_t(1) << 40);
        QCOMPARE(back.sampling.minP, 0.07);
        QCOMPARE(back.sampling.dryMultiplier, 0.8);
        QCOMPARE(back.sampling.mirostat, 2);
        QCOMPARE(back.sampling.temperatureLast, 1);
        QCOMPARE(back.sampling.xtcProbability, 0.25);
        QCOMPARE(back.sampling.topA, 0.0005);
        QCOMPARE(back.sampling.topP, 0.0004);
        QCOMPARE(back.sampling.samplerOrder, s.sampling.samplerOrder);
        QCOMPARE(back.sampling.bannedPhrases, s.sampling.bannedPhrases);
        QCOMPARE(back.sampling.textBias, s.sampling.textBias);
        // A line that is not TEXT=X is named, and not used.
        auto* bias = panel.findChild<QPlainTextEdit*>("textBias");
        auto* biasError = panel.findChild<QLabel*>("textBiasError");
        QVERIFY(biasError->text().isEmpty());
        bias->moveCursor(QTextCursor::End);
        bias->insertPlainText("\n Elizabeth\n Jane=150\n Bingley=+3");
        QCOMPARE(panel.settings().sampling.textBias,
                 (std::vector<std::pair<std::string, float>>{
                     {" Darcy", -5.f}, {"a=b", 2.5f}, {" Bingley", 3.f}}));
        QCOMPARE(biasError->text(),
                 QString("Not used (needs TEXT=X, X from -100 to 100): line 3, 4"));
        auto* banned = panel.findChild<QPlainTextEdit*>("bannedPhrases");
        banned->moveCursor(QTextCursor::End);
        banned->insertPlainText("\n\nwith a grin\n");
        QCOMPARE(panel.settings().sampling.bannedPhrases,
                 (std::vector<std::string>{"shivers down her spine", "Mr. Darcy", "with a grin"}));
        // Whole words unless "Inside words too" is ticked.
        auto* inside = panel.findChild<QCheckBox*>("bannedInsideWords");
        QVERIFY(inside && !inside->isChecked());
        QVERIFY(!panel.settings().sampling.bannedInsideWords);
        inside->setChecked(true);
        QVERIFY(panel.settings().sampling.bannedInsideWords);
        s.sampling.bannedInsideWords = true;
        panel.load(s);
        QVERIFY(inside->isChecked());
        // The logit bias's example shows the space a word's token begins with.
        QVERIFY(bias->placeholderText().startsWith(QChar(0x2423)));
        // Edited, the control's value is taken.
        auto* order = panel.findChild<QLineEdit*>("samplerOrder");
        order->clear();
        QTest::keyClicks(order, "min_p,temperature");
        QCOMPARE(panel.settings().sampling.samplerOrder,
                 (std::vector<std::string>{"min_p", "temperature"}));
        panel.findChild<QDoubleSpinBox*>("top_a")->setValue(0.25);
        QCOMPARE(panel.settings().sampling.topA, 0.25);
        QCOMPARE(panel.findChild<QComboBox*>("preset")->currentText(), QString("Custom"));
    }

    void presets() {
        ui::GenerationSettingsPanel panel;
        auto* preset = panel.findChild<QComboBox*>("preset");
        QCOMPARE(preset->currentText(), QString("Balanced"));
        const int minPDry = preset->findText("Min-p + DRY");
        QVERIFY(minPDry >= 0);
        panel.applyPreset(minPDry);
        auto s = panel.settings().sampling;
        QCOMPARE(s.minP, 0.1);
        QCOMPARE(s.dryMultiplier, 0.8);
        QCOMPARE(s.topP, 1.0);
        QCOMPARE(s.repetitionPenalty, 1.0);
        QCOMPARE(preset->currentIndex(), minPDry);
        panel.findChild<QDoubleSpinBox*>("min_p")->setValue(0.2); // an edit: Custom
        QCOMPARE(preset->currentText(), QString("Custom"));
        panel.findChild<QDoubleSpinBox*>("min_p")->setValue(0.1); // back: the preset again
        QCOMPARE(preset->currentIndex(), minPDry);
        // A preset chosen over a stored value that the controls show rounded is applied.
        story::StorySettings stored = story::defaultSettings();
        stored.sampling.temperature = 0.8004;
        panel.load(stored);
        panel.applyPreset(story::kBalancedPreset);
        QCOMPARE(panel.settings().sampling.temperature, 0.8);
    }

    // The advanced samplers stay out of the way until asked for; the panel fits a dock.
    void moreSamplersOnDemand() {
        ui::GenerationSettingsPanel panel;
        panel.resize(340, 900);
        panel.show();
        auto* more = panel.findChild<QGroupBox*>("moreSamplers");
        QVERIFY(!more->isVisible());
        panel.findChild<QToolButton*>("showMoreSamplers")->click();
        QVERIFY(more->isVisible());
        QVERIFY(panel.findChild<QComboBox*>("mirostat")->isVisible());
        panel.resize(panel.width(), panel.sizeHint().height());
        QDir().mkpath(BATON_SCREENSHOT_DIR);
        panel.grab().save(QStringLiteral(BATON_SCREENSHOT_DIR "/generation_panel.png"));
        QVERIFY(panel.sizeHint().width() <= 400);
    }
};

QTEST_MAIN(TestGenerationPanel)
#include "tst_generation_panel.moc"
