//! The one rounding rule of every figure the profiler keeps or prints
//! (issue 29): `x` to `places` decimals, `(x · 10^places).round() /
//! 10^places` — half away from zero on the scaled value. The model keeps
//! its internal figures to thousandths ([`r3`]), the report record holds
//! cycles to hundredths ([`r2`]) and shares (0..1) to ten-thousandths
//! ([`r4`]); each is this rule at one precision, nothing else rounds.

/// `x` rounded to `places` decimals (the one rule).
#[inline]
pub fn round(x: f64, places: u32) -> f64 {
    let s = 10f64.powi(places as i32);
    (x * s).round() / s
}

/// Cycles as the record holds them: 2 decimals.
#[inline]
pub fn r2(x: f64) -> f64 {
    round(x, 2)
}

/// The model's internal figures: 3 decimals.
#[inline]
pub fn r3(x: f64) -> f64 {
    round(x, 3)
}

/// Shares (0..1) as the record holds them: 4 decimals (a percentage to 2).
#[inline]
pub fn r4(x: f64) -> f64 {
    round(x, 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_at_each_precision() {
        for k in -100_000i64..100_000 {
            let x = k as f64 / 7919.0;
            assert_eq!(r2(x), (x * 100.0).round() / 100.0);
            assert_eq!(r3(x), (x * 1000.0).round() / 1000.0);
            assert_eq!(r4(x), (x * 10_000.0).round() / 10_000.0);
        }
        // half away from zero on the scaled value
        assert_eq!(r2(0.125), 0.13);
        assert_eq!(r2(-0.125), -0.13);
        assert_eq!(r2(2.5e-3), 0.0);
        assert!(r2(f64::NAN).is_nan());
    }
}
