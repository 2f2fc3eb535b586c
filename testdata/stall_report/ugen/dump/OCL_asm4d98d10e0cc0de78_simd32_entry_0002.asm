//.kernel gen_conv
//.platform PVCXT
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.instCount 91
//.RA type	GRAPH_COLORING_FF_BC_RA
//.simd 32

// B000: Preds:{},  Succs:{B001}
per_thread_prolog:
/* [00000000] */ (W)     mov (16|M0)              r127.0<1>:ud  0x0:ud                                 {A@1}              // ALU pipe: int; $1
/* [00000010] */ (W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                           // ALU pipe: int; $1
/* [00000020] */         load.ugm.d32.a64 (32|M0) r1:2         [r3:4]                                  {I@1,$0}           // ex_desc:0x0; desc:0x4048EF2 // $0
/* [00000030] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000040] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$0.src}           // ALU pipe: float; $4
/* [00000050] */         load.ugm.d32.a64 (32|M0) r2:2         [r4:4]                                  {I@1,$1}           // ex_desc:0x0; desc:0x46077D5 // $0
// B002: Preds:{B001},  Succs:{B003, B004}
// _main:

// File: /home/user/work/bench/src/kernels.cpp

// Line 21:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000060] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$1.dst}           // ALU pipe: float; $4
/* [00000070] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000080] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000090] */         load.ugm.d32.a64 (32|M0) r12:2         [r14:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x45DAE73 // $1
// B003: Preds:{B002, B003},  Succs:{B003, B004}

// Line 22:  c[i] = a[i] + b[i];
/* [000000A0] */         sync.nop                 null                                                 {Compacted,$2.dst} // $4
/* [000000A8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x47EAA61 // $2
/* [000000B8] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [000000C8] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000000D8] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$3.dst}           // ALU pipe: float; $4
/* [000000E8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x45F0C6C // $2
/* [000000F8] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000108] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000118] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$4.dst}           // ALU pipe: float; $4
/* [00000128] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x46941D9 // $2
/* [00000138] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000148] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$5.dst}           // ALU pipe: float; $4
/* [00000158] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x46AB86F // $2
/* [00000168] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000178] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000188] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$6.dst}           // ALU pipe: float; $4
/* [00000198] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x4CDFF4F // $2
/* [000001A8] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {Compacted}        // ALU pipe: int; $2
/* [000001B0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$7.dst}           // ALU pipe: float; $4
/* [000001C0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$8}           // ex_desc:0x0; desc:0x4EB73E6 // $2
/* [000001D0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {I@1}              // ALU pipe: int; $2
/* [000001E0] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000001F0] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$8.dst}           // ALU pipe: float; $4
/* [00000200] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$9}           // ex_desc:0x0; desc:0x4EE3E85 // $2
/* [00000210] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {Compacted}        // ALU pipe: int; $2
/* [00000218] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$9.dst}           // ALU pipe: float; $4
/* [00000228] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$10}          // ex_desc:0x0; desc:0x4B84B79 // $2
/* [00000238] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {Compacted}        // ALU pipe: int; $2
/* [00000240] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$10.dst}          // ALU pipe: float; $4
/* [00000250] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$11}          // ex_desc:0x0; desc:0x4B9CF73 // $2
/* [00000260] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [00000268] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000278] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$11.dst}          // ALU pipe: float; $4
/* [00000288] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$12}          // ex_desc:0x0; desc:0x4F78B8C // $2
/* [00000298] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [000002A0] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000002B0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$12.dst}          // ALU pipe: float; $4

// Line 23:  acc += x[i] * w[i];
/* [000002C0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$13}          // ex_desc:0x0; desc:0x4876F55 // $3
/* [000002D0] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [000002E0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$13.dst}          // ALU pipe: float; $4
/* [000002F0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$14}          // ex_desc:0x0; desc:0x4D7B312 // $3
/* [00000300] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000308] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000318] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$14.dst}          // ALU pipe: float; $4
/* [00000328] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$15}          // ex_desc:0x0; desc:0x4A048CF // $3
/* [00000338] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000348] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$15.dst}          // ALU pipe: float; $4
/* [00000358] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$0}           // ex_desc:0x0; desc:0x4B11E56 // $3
/* [00000368] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000378] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000388] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$0.dst}           // ALU pipe: float; $4
/* [00000398] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$1}           // ex_desc:0x0; desc:0x49B87AB // $3
/* [000003A8] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {I@1}              // ALU pipe: int; $2
/* [000003B8] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$1.dst}           // ALU pipe: float; $4
/* [000003C8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x45E5E2F // $3
/* [000003D8] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [000003E0] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000003F0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$2.dst}           // ALU pipe: float; $4
/* [00000400] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x492412C // $3
/* [00000410] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000420] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$3.dst}           // ALU pipe: float; $4

// Line 24:  out[gid] = acc;
/* [00000430] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x42960B3 // $4
/* [00000440] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {Compacted}        // ALU pipe: int; $2
/* [00000448] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000458] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$4.dst}           // ALU pipe: float; $4
/* [00000468] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x4D36B2D // $4
/* [00000478] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000488] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000498] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$5.dst}           // ALU pipe: float; $4
/* [000004A8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x4B6E95B // $4
/* [000004B8] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {Compacted}        // ALU pipe: int; $2
/* [000004C0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$6.dst}           // ALU pipe: float; $4
/* [000004D0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x4A38A57 // $4
/* [000004E0] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [000004E8] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000004F8] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$7.dst}           // ALU pipe: float; $4
/* [00000508] */         cmp (32|M0)   (lt)f0.0   null<1>:d     r20.0<1;1,0>:d    r3.2<0;1,0>:d        {I@1}              // ALU pipe: int; $5
/* [00000518] */ (W&f0.0)jmpi                     _L_k0_0_                                                                // ALU pipe: int; $5
// B004: Preds:{B002, B003},  Succs:{}

// Line 25:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000528] */         store.ugm.d32.a64 (32|M0)[r26:4]       r24:2                                  {A@1,$8}           // ex_desc:0x0; desc:0x4000584
/* [00000538] */ (W)     sync.allrd ($8)          null                                                                    // 
/* [00000548] */ (W)     send.gtwy (1|M0)         null     r127    null:0  0x0  0x02000010             {EOT,A@1}          // wr:1+0, rd:0; end of thread
