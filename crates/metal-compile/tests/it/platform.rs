use std::path::PathBuf;

use metal_compile::{
    compiling_supported, default_compiler, device_generation, is_g13_device, CompileError,
    CompileRequest, MetalCompiler, Source, UnsupportedCompiler, UNSUPPORTED_MESSAGE,
};

fn request() -> CompileRequest {
    let mut r = CompileRequest::new(Source::File(PathBuf::from("kernel.metal")));
    r.functions = vec!["matmul_naive".into()];
    r
}

#[test]
fn unsupported_compiler_error_text() {
    let err = UnsupportedCompiler.compile(&request()).unwrap_err();
    assert!(matches!(err, CompileError::Unsupported));
    let text = err.to_string();
    assert_eq!(text, UNSUPPORTED_MESSAGE);
    assert_eq!(text.lines().count(), 1);
    assert!(text.starts_with(
        "compiling .metal needs macOS with the Xcode command-line tools (`xcrun metal`)"
    ));
    assert!(text.contains("metal-profile export kernel.metal -f NAME -o kernel.archive"));
    assert!(text.contains("metal-profile kernel.archive -f NAME"));
}

#[cfg(not(target_os = "macos"))]
#[test]
fn default_compiler_is_unsupported_off_macos() {
    assert!(!compiling_supported());
    let err = default_compiler().compile(&request()).unwrap_err();
    assert!(matches!(err, CompileError::Unsupported), "{err}");
    // Even a source string is refused before anything touches the disk.
    let mut r = request();
    r.source = Source::Text("kernel void k() {}".into());
    assert!(matches!(
        default_compiler().compile(&r).unwrap_err(),
        CompileError::Unsupported
    ));
}

#[cfg(target_os = "macos")]
#[test]
fn default_compiler_is_real_on_macos() {
    assert!(compiling_supported());
    // Request validation happens before any tool runs.
    let r = CompileRequest::new(Source::Text("kernel void k() {}".into()));
    assert!(matches!(
        default_compiler().compile(&r).unwrap_err(),
        CompileError::NoFunctionsRequested
    ));
}

#[test]
fn device_generations() {
    assert_eq!(device_generation("Apple M1"), Some(13));
    assert_eq!(device_generation("Apple M1 Pro"), Some(13));
    assert_eq!(device_generation("Apple M1 Ultra"), Some(13));
    assert_eq!(device_generation("Apple M2 Max"), Some(14));
    assert_eq!(device_generation("Apple M3"), Some(15));
    assert_eq!(device_generation("Apple M4 Pro"), Some(16));
    assert_eq!(device_generation("Apple M10"), Some(22));
    assert_eq!(device_generation("Apple Mx"), None);
    assert_eq!(device_generation("Apple M1X"), None);
    assert_eq!(device_generation("AMD Radeon Pro 5500M"), None);
    assert_eq!(device_generation("Apple Paravirtual device"), None);
    assert!(is_g13_device("Apple M1 Max"));
    assert!(!is_g13_device("Apple M2"));
}
