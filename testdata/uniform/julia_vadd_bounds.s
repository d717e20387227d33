; A bounds-checked vector add c[i] = a[i] + b[i] as Julia / Metal.jl emit it
; (issue 22, item 4): the arrays' lengths are loaded from the argument buffer
; (u0_u1) at fixed offsets -- one address for the whole SIMD-group -- before
; the thread-indexed loads and the store. See NOTE.md for the origin.
;
; Lines 1-12: the first 12 instructions of Metal.jl's `vadd` (shared corpus
; real/MetalJL_PR96_vadd/vadd_frag_0x0.applegpu.txt, JuliaGPU/Metal.jl PR #96):
; a's dimensions (xyzw), the length as their product, thread_position + 1
; (Julia's 1-based index) and the comparisons of its bounds check.
device_load      0, i32, xyzw, r5_r6_r7_r8, u0_u1, 1, signed, lsl 1
wait             0
imadd            r2_r3, r7, r5, 0
imadd            r3, r7, r6, r3
get_sr           r1, sr80 (thread_position_in_grid.x)
imadd            r5, r8, r5, r3
iadd             r1, 1, r1
icmpsel          ugt, r3l, r2, 0, 1, 0
icmpsel          sgt, r0h, r5, 0, 1, 0
icmpsel          seq, r0h, r5, 0, r3l, r0h
icmpsel          seq, r4l, r1, 0, 1, 0
icmpsel          seq, r3, r0h, 0, 0, r2
; Hand-written continuation in the same style: b's and c's lengths from the
; argument buffer (fixed offsets), one bounds check per array access (the
; 0-based index against each length), then the thread-indexed work.
device_load      1, i32, x, r9, u0_u1, 12, signed
device_load      1, i32, x, r10, u0_u1, 20, signed
isub             r12, r1, 1
wait             1
mov_imm          r0l, 0
if_icmp          r0l, ult, r12, r3, 1
if_icmp          r0l, ult, r12, r9, 1
if_icmp          r0l, ult, r12, r10, 1
device_load      0, i32, x, r13, u2_u3, r12, unsigned, lsl 2
device_load      1, i32, x, r14, u4_u5, r12, unsigned, lsl 2
wait             0
wait             1
fadd32           r13, r13, r14
device_store     0, i32, x, r13, u6_u7, r12, unsigned, lsl 2, 0
pop_exec         r0l, 3
stop
