// Package pk is the computation behind the pk.nca skill: non-compartmental
// analysis (NCA) of a concentration-time profile after an extravascular dose,
// an IV bolus or an IV infusion, single or repeated at dosing intervals, and
// its figure.
//
// # Why it exists
//
// A scientist reads an NCA table as the result of a procedure they know, so
// the procedure is fixed and named: every result says its route of
// administration, AUC method, BLQ rule and λz selection, lists what it
// imputed (C0, BLQ values) and warns when a number should be read with care.
// The package is pure (no database, no I/O) and deterministic; the skill
// framework wraps it as an in_process tool and converts the caller's units.
//
// # Contract
//
// [NCA] and [NCAMany] take numbers in canonical units (time h,
// concentration mg/L, dose mg) and return results in h, mg/L, mg·h/L,
// mg·h²/L, 1/h, L/h and L ([Units] maps each field). Bad input is refused,
// with nothing computed, by a *[problem.Error] listing every [problem.Problem]
// (path, snake_case code, value, message). [FigureSVG] draws a result as a
// self-contained SVG.
//
// # The calculation
//
//   - Time zero. Integration starts at t = 0. An observed sample at t = 0 is
//     used as it is, even when non-zero (theophylline subjects 1, 7 and 10).
//     Extravascular without a t = 0 sample: C(0) = 0 is assumed. IV bolus
//     without a usable t = 0 sample (missing, or a zero pre-dose value): C0 is
//     back-extrapolated log-linearly from the first two positive samples,
//     C0 = C1·(C1/C2)^(t1/(t2−t1)), when they decline, else C0 = C1 (PKNCA's
//     "logslope" then "c1" rules). An imputed C0 is never Cmax and never in
//     the λz fit.
//   - BLQ. With LLOQ set, a value below it is handled by the declared
//     [Profile.BLQRule]: zero, missing, zero_before_tmax_missing_after or
//     zero_leading_trailing_missing_middle (see [BLQRules]). Without LLOQ a
//     zero is a measured zero.
//   - AUC and AUMC by the caller's method: linear trapezoid throughout, or
//     linear_up_log_down (log trapezoid where the concentration falls and
//     both ends are positive, linear otherwise). The formulas are on segment.
//     AUClast ends at Tlast (the last positive concentration), AUCall at the
//     last sample kept.
//   - λz by the best-fit rule: unweighted log-linear least squares on the
//     last n positive samples strictly after Tmax, n = 3 … all; fits with a
//     non-negative slope are dropped; the highest adjusted R² wins, and among
//     fits within [AdjR2Tolerance] (1e-4) of it the one with the most points.
//     The same rule serves both routes (Cmax is excluded; for an IV bolus it
//     is normally the first sample). [Options.LambdaZPoints] fixes n instead.
//   - Extrapolation (Gabrielsson & Weiner, Pharmacokinetic and
//     Pharmacodynamic Data Analysis, 5th ed., ch. 2): AUCinf = AUClast +
//     Clast/λz (observed, or with the fitted Clast for "pred"), AUMCinf =
//     AUMClast + Clast·Tlast/λz + Clast/λz², MRTinf = AUMCinf/AUCinf,
//     CL(/F) = Dose/AUCinf, Vz(/F) = Dose/(λz·AUCinf), t½ = ln 2/λz, span =
//     fit interval/t½. More than 20% of AUCinf extrapolated is flagged.
//   - Infusion (Profile.Duration): C(0) = 0 unless observed; no λz point
//     before the infusion ends; MRT = AUMC/AUC − Tinf/2; Vss = MRTinf·CL for
//     both IV routes. [Conventions] lists where Phoenix and PKNCA differ and
//     the rule followed (Cmax is never in a best-fit λz, PKNCA's rule).
//   - λz under the caller's control ([LambdaZControl]): a manual range,
//     samples excluded with a reason, weighting uniform, 1/y or 1/y²
//     (weighted least squares); the choice is in [Terminal] and on the figure.
//     Corr_XY = the fit's correlation, −√R² when falling.
//   - Partial AUCs ([PartialAUCRequest]): between samples by the caller's
//     interpolation (linear, or log where falling), after Tlast by λz from the
//     observed Clast or not at all; each result names both rules.
//   - Dosing intervals (Profile.Tau, DoseTimes): per dose [d, d + τ] AUCτ,
//     Cmax, Cmin, Cτ, Cavg = AUCτ/τ, fluctuation 100·(Cmax − Cmin)/Cavg, swing
//     (Cmax − Cmin)/Cmin, CLss = Dose/AUCτ and the accumulation index
//     1/(1 − e^(−λz·τ)); after several doses λz follows the last dose's peak.
//   - Urine ([UrineCollection]): Ae = V·C per collection, fe = ΣAe/Dose, CLr =
//     ΣAe/AUC over the collections. Also Tlag, Cmax/D, AUC/D, AUMC %extrapolated.
//
// # Verification
//
// The golden tests check the one-compartment oral model (Bateman function)
// against its analytic λz, AUCinf, AUMCinf, MRT, CL/F and Vz/F; an IV bolus
// mono-exponential exactly; theophylline subject 1 against a calculation
// written out in testdata/theoph_subject1_by_hand.txt; and all 12
// theophylline subjects, both methods, every parameter, against a second,
// naive implementation in naive_test.go. The pk.nca/1.1 parameters: against
// NonCompart's published Theoph table (testdata/noncompart_theoph_linear.txt:
// Cmax/D, Tlag, Corr_XY, AUCinf/D, AUMC %extrapolated, AUC 0–12), the naive
// implementation (all subjects, both methods, partial AUCs by cumulative
// difference), a naive weighted regression, an exponential's exact partial
// AUC, a superposed Bateman steady state, the analytic infusion, and an
// exponential urine profile with a known CLr.
package pk
