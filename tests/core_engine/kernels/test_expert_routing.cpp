// Mixture-of-experts routing (kernels/expert_routing.h) on hand-worked cases for each rule
// llama.cpp's build_moe_ffn applies: softmax, sigmoid and gpt-oss's softmax over the chosen
// logits; normalisation with its floor; a scale of 0 or 1 left out; a selection bias that moves
// the choice but not the weights; group-limited selection by the sum of each group's best two;
// ties to the lower expert; the margins that tell a near tie; and the plan grouping tokens by
// expert.
#include <QTest>

#include <cmath>
#include <vector>

#include "kernels/expert_routing.h"

using namespace workbench;

namespace {

std::vector<ExpertChoice> route(const std::vector<float>& logits, const RouterParams& p, std::vector<float>* margins = nullptr) {
    const int64_t n = static_cast<int64_t>(logits.size()) / p.n_expert;
    std::vector<ExpertChoice> out(static_cast<size_t>(n * p.k));
    if (margins) margins->resize(static_cast<size_t>(n));
    route_tokens(logits.data(), n, p, out.data(), margins ? margins->data() : nullptr);
    return out;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

}  // namespace

class TestExpertRouting : public QObject {
    Q_OBJECT

private slots:
    void softmaxPicksTheLargestAndKeepsTheirProbabilities() {
        RouterParams p;
        p.n_expert = 4;
        p.k = 2;
        const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.0f};
        const auto c = route(logits, p);
        QCOMPARE(c[0].expert, 1);
        QCOMPARE(c[1].expert, 3);
        double z = 0;
        for (float x : logits) z += std::exp(static_cast<double>(x));
        QVERIFY(near(c[0].weight, std::exp(2.0) / z));
        QVERIFY(near(c[1].weight, std::exp(1.0) / z));
        // Normalised (Qwen3-MoE): the two weights sum to one, in the same ratio.
        p.norm_weights = true;
        const auto n = route(logits, p);
        QVERIFY(near(n[0].weight, std::exp(2.0) / (std::exp(2.0) + std::exp(1.0))));
        QVERIFY(near(n[0].weight + n[1].weight, 1.0));
    }

    void sigmoidScalesAndTheFloorOfTheNormalisation() {
        RouterParams p;
        p.n_expert = 3;
        p.k = 1;
        p.gating = ExpertGating::sigmoid;
        p.weights_scale = 2.5f;
        const auto c = route({-1.0f, 0.0f, 3.0f}, p);
        QCOMPARE(c[0].expert, 2);
        QVERIFY(near(c[0].weight, 2.5 / (1.0 + std::exp(-3.0))));
        p.weights_scale = 1.0f;  // 1 and 0 mean "no scale"
        QVERIFY(near(route({-1.0f, 0.0f, 3.0f}, p)[0].weight, 1.0 / (1.0 + std::exp(-3.0))));
        // A vanishing sum is divided by llama.cpp's floor, not by itself.
        p.norm_weights = true;
        const float w = route({-40.0f, -41.0f, -42.0f}, p)[0].weight;
        QVERIFY(near(w, (1.0 / (1.0 + std::exp(40.0))) / 6.103515625e-5));
    }

    void softmaxWeightSoftmaxesTheChosenLogits() {
        RouterParams p;
        p.n_expert = 4;
        p.k = 2;
        p.gating = ExpertGating::softmax_weight;
        const auto c = route({3.0f, -2.0f, 1.0f, 0.0f}, p);
        QCOMPARE(c[0].expert, 0);
        QCOMPARE(c[1].expert, 2);
        QVERIFY(near(c[0].weight, 1.0 / (1.0 + std::exp(-2.0))));
        QVERIFY(near(c[0].weight + c[1].weight, 1.0));
    }

    void selectionBiasMovesTheChoiceNotTheWeight() {
        RouterParams p;
        p.n_expert = 3;
        p.k = 1;
        p.gating = ExpertGating::sigmoid;
        const float bias[3] = {0.0f, 0.0f, 0.5f};
        p.selection_bias = bias;
        const auto c = route({1.0f, 0.0f, 0.8f}, p);
        QCOMPARE(c[0].expert, 2);  // 0.69 + 0.5 beats 0.73
        QVERIFY(near(c[0].weight, 1.0 / (1.0 + std::exp(-0.8))));
    }

    void groupsRankByTheirBestTwo() {
        // Two groups of three: group 0 holds the single best expert, group 1 the better pair.
        RouterParams p;
        p.n_expert = 6;
        p.k = 2;
        p.gating = ExpertGating::sigmoid;
        p.n_groups = 2;
        p.n_group_used = 1;
        std::vector<float> margins;
        const auto c = route({4.0f, -4.0f, -4.0f, 1.0f, 1.5f, -4.0f}, p, &margins);
        QCOMPARE(c[0].expert, 4);
        QCOMPARE(c[1].expert, 3);
        const auto s = [](float x) { return 1.0 / (1.0 + std::exp(-static_cast<double>(x))); };
        const double group_gap = ((s(1.5f) + s(1.0f)) - (s(4.0f) + s(-4.0f))) / (s(1.5f) + s(1.0f));
        QVERIFY(near(margins[0], std::min(group_gap, (s(1.0f) - s(-4.0f)) / s(1.0f))));
    }

    void tiesGoToTheLowerExpertAndShowAsZeroMargin() {
        RouterParams p;
        p.n_expert = 4;
        p.k = 2;
        std::vector<float> margins;
        const auto c = route({1.0f, 2.0f, 1.0f, 0.0f}, p, &margins);
        QCOMPARE(c[0].expert, 1);
        QCOMPARE(c[1].expert, 0);
        QCOMPARE(margins[0], 0.0f);
        p.k = 4;  // every expert chosen: nothing could flip
        route({1.0f, 2.0f, 1.0f, 0.0f}, p, &margins);
        QVERIFY(std::isinf(margins[0]));
    }

    void thePlanGroupsTokensByExpert() {
        const std::vector<ExpertChoice> choices = {{3, 0.6f}, {1, 0.4f}, {1, 0.7f}, {0, 0.3f}, {3, 0.9f}, {0, 0.1f}};
        ExpertPlan plan;
        plan_experts(choices.data(), 3, 2, 5, plan);
        QCOMPARE(plan.experts, (std::vector<int32_t>{0, 1, 3}));
        QCOMPARE(plan.first, (std::vector<int64_t>{0, 2, 4, 6}));
        QCOMPARE(plan.token, (std::vector<int32_t>{1, 2, 0, 1, 0, 2}));
        for (int64_t i = 0; i < 6; ++i) {
            const int64_t row = plan.row_of[static_cast<size_t>(i)];
            QCOMPARE(plan.token[static_cast<size_t>(row)], static_cast<int32_t>(i / 2));
            size_t at = 0;
            while (plan.first[at + 1] <= row) ++at;
            QCOMPARE(plan.experts[at], choices[static_cast<size_t>(i)].expert);
        }
    }
};

QTEST_GUILESS_MAIN(TestExpertRouting)
#include "test_expert_routing.moc"
