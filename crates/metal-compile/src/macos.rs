//! The Metal API side (macOS only): load the `.metallib`, add a compute pipeline for each kernel
//! to an empty `MTLBinaryArchive` (this is what makes the driver compile native AGX code) and
//! serialize the archive to a file.
//!
//! Type-checked for `aarch64-apple-darwin` on Linux CI; exercised only on a real Mac.

use std::path::Path;

use objc2::rc::{autoreleasepool, Retained};
use objc2::runtime::ProtocolObject;
use objc2_foundation::{NSError, NSString, NSURL};
use objc2_metal::{
    MTLBinaryArchive, MTLBinaryArchiveDescriptor, MTLComputePipelineDescriptor, MTLCopyAllDevices,
    MTLCreateSystemDefaultDevice, MTLDevice, MTLFunction, MTLFunctionType, MTLLibrary,
};

// objc2-metal's docs: in a command-line process `MTLCreateSystemDefaultDevice`
// returns nil unless CoreGraphics is linked (it is what registers the display
// GPU). Linking it costs nothing in a GUI-less tool.
#[link(name = "CoreGraphics", kind = "framework")]
extern "C" {}

/// The system default device, else the first of `MTLCopyAllDevices` (which
/// also works in processes without a window server connection).
fn device() -> Result<Retained<ProtocolObject<dyn MTLDevice>>, CompileError> {
    if let Some(d) = MTLCreateSystemDefaultDevice() {
        return Ok(d);
    }
    let all = MTLCopyAllDevices();
    all.to_vec()
        .into_iter()
        .next()
        .ok_or(CompileError::NoMetalDevice)
}

use crate::{ArchiveHarvester, CompileError, FunctionSelection};

/// Builds the binary archive with the system default Metal device.
#[derive(Debug, Clone, Copy, Default)]
pub struct MetalApiHarvester;

fn metal_error(operation: &str, err: &NSError) -> CompileError {
    CompileError::Metal {
        operation: operation.to_string(),
        message: err.localizedDescription().to_string(),
    }
}

fn file_url(path: &Path) -> Result<Retained<NSURL>, CompileError> {
    NSURL::from_file_path(path).ok_or_else(|| {
        CompileError::InvalidRequest(format!("cannot make a file URL from {}", path.display()))
    })
}

fn is_kernel(function: &ProtocolObject<dyn MTLFunction>) -> bool {
    function.functionType() == MTLFunctionType::Kernel
}

/// The names of the library's kernel functions, sorted.
fn kernel_names(library: &ProtocolObject<dyn MTLLibrary>) -> Vec<String> {
    let mut names: Vec<String> = library
        .functionNames()
        .to_vec()
        .into_iter()
        .filter(|name| {
            library
                .newFunctionWithName(name)
                .is_some_and(|f| is_kernel(&f))
        })
        .map(|name| name.to_string())
        .collect();
    names.sort();
    names
}

impl ArchiveHarvester for MetalApiHarvester {
    fn harvest(
        &self,
        metallib: &Path,
        selection: &FunctionSelection,
        archive_out: &Path,
    ) -> Result<(String, Vec<String>), CompileError> {
        autoreleasepool(|_| -> Result<(String, Vec<String>), CompileError> {
            let device = device()?;
            let device_name = device.name().to_string();

            let library_url = file_url(metallib)?;
            let library = device
                .newLibraryWithURL_error(&library_url)
                .map_err(|e| metal_error("newLibraryWithURL", &e))?;

            let names = match selection {
                FunctionSelection::AllKernels => {
                    let names = kernel_names(&library);
                    if names.is_empty() {
                        return Err(CompileError::NoKernels);
                    }
                    names
                }
                FunctionSelection::Named(names) => names.clone(),
            };

            let archive = device
                .newBinaryArchiveWithDescriptor_error(&MTLBinaryArchiveDescriptor::new())
                .map_err(|e| metal_error("newBinaryArchiveWithDescriptor", &e))?;

            for name in &names {
                let function = library
                    .newFunctionWithName(&NSString::from_str(name))
                    .ok_or_else(|| CompileError::FunctionNotFound {
                        name: name.clone(),
                        available: kernel_names(&library),
                    })?;
                if !is_kernel(&function) {
                    return Err(CompileError::NotAKernel { name: name.clone() });
                }
                let pipeline = MTLComputePipelineDescriptor::new();
                pipeline.setComputeFunction(Some(&function));
                archive
                    .addComputePipelineFunctionsWithDescriptor_error(&pipeline)
                    .map_err(|e| {
                        metal_error(
                            &format!("addComputePipelineFunctionsWithDescriptor (`{name}`)"),
                            &e,
                        )
                    })?;
            }

            let archive_url = file_url(archive_out)?;
            archive
                .serializeToURL_error(&archive_url)
                .map_err(|e| metal_error("serializeToURL", &e))?;
            Ok((device_name, names))
        })
    }
}
