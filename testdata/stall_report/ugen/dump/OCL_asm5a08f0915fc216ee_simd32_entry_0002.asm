//.kernel _ZTSZZ4mainENKUlRN4sycl3_V17handlerEE_clES2_EUlNS0_7nd_itemILi1EEEE_
//.platform PVCXT
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.instCount 22
//.RA type	GRAPH_COLORING_FF_BC_RA
//.simd 16

// B000: Preds:{},  Succs:{B001}
per_thread_prolog:
/* [00000000] */ (W)     mov (16|M0)              r127.0<1>:ud  0x0:ud                                 {A@1}              // ALU pipe: int; $1
/* [00000010] */ (W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                           // ALU pipe: int; $1
/* [00000020] */         load.ugm.d32.a64 (32|M0) r1:2         [r3:4]                                  {I@1,$0}           // ex_desc:0x0; desc:0x4E5F675 // $0
/* [00000030] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000040] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$0.src}           // ALU pipe: float; $4
/* [00000050] */         load.ugm.d32.a64 (32|M0) r2:2         [r4:4]                                  {I@1,$1}           // ex_desc:0x0; desc:0x49FB3B0 // $0
// B002: Preds:{B001},  Succs:{B003, B004}
// _main:

// File: /home/user/work/bench/src/kernels.cpp

// Line 21:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000060] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$1.dst}           // ALU pipe: float; $4
/* [00000070] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000080] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000090] */         load.ugm.d32.a64 (32|M0) r12:2         [r14:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x459F21A // $1
// B003: Preds:{B002, B003},  Succs:{B003, B004}

// Line 22:  c[i] = a[i] + b[i];
/* [000000A0] */         sync.nop                 null                                                 {Compacted,$2.dst} // $4
/* [000000A8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x42D8C3C // $2
/* [000000B8] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {Compacted}        // ALU pipe: int; $2
/* [000000C0] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$3.dst}           // ALU pipe: float; $4
/* [000000D0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x4DB4AB8 // $2
/* [000000E0] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [000000F0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$4.dst}           // ALU pipe: float; $4
/* [00000100] */         cmp (32|M0)   (lt)f0.0   null<1>:d     r20.0<1;1,0>:d    r3.2<0;1,0>:d        {I@1}              // ALU pipe: int; $5
/* [00000110] */ (W&f0.0)jmpi                     _L_k0_0_                                                                // ALU pipe: int; $5
// B004: Preds:{B002, B003},  Succs:{}

// Line 23:  acc += x[i] * w[i];
/* [00000120] */         store.ugm.d32.a64 (32|M0)[r26:4]       r24:2                                  {A@1,$5}           // ex_desc:0x0; desc:0x4000584
/* [00000130] */ (W)     sync.allrd ($5)          null                                                                    // 
/* [00000140] */ (W)     send.gtwy (1|M0)         null     r127    null:0  0x0  0x02000010             {EOT,A@1}          // wr:1+0, rd:0; end of thread
