//.kernel _ZTSN3xpu5xetla12hgemm_callerIN4sycl3_V13ext6oneapi8bfloat16ELi256ELi256ELi32ELi64ELi32ELi1ELb1ELb0EEE
//.platform PVCXT
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.instCount 90
//.RA type	GRAPH_COLORING_FF_BC_RA
//.simd 32

// B000: Preds:{},  Succs:{B001}
per_thread_prolog:
/* [00000000] */ (W)     mov (16|M0)              r127.0<1>:ud  0x0:ud                                 {A@1}              // ALU pipe: int; $1
/* [00000010] */ (W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                           // ALU pipe: int; $1
/* [00000020] */         load.ugm.d32.a64 (32|M0) r1:2         [r3:4]                                  {I@1,$0}           // ex_desc:0x0; desc:0x493F594 // $0
/* [00000030] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000040] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$0.src}           // ALU pipe: float; $4
/* [00000050] */         load.ugm.d32.a64 (32|M0) r2:2         [r4:4]                                  {I@1,$1}           // ex_desc:0x0; desc:0x4D040A7 // $0
// B002: Preds:{B001},  Succs:{B003, B004}
// _main:

// File: /home/user/work/bench/src/kernels.cpp

// Line 21:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000060] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$1.dst}           // ALU pipe: float; $4
/* [00000070] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000080] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000088] */         load.ugm.d32.a64 (32|M0) r12:2         [r14:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x4864330 // $1
// B003: Preds:{B002, B003},  Succs:{B003, B004}

// Line 22:  c[i] = a[i] + b[i];
/* [00000098] */         sync.nop                 null                                                 {Compacted,$2.dst} // $4
/* [000000A0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x4324CC0 // $2
/* [000000B0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {I@1}              // ALU pipe: int; $2
/* [000000C0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$3.dst}           // ALU pipe: float; $4
/* [000000D0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x480C1D0 // $2
/* [000000E0] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {Compacted}        // ALU pipe: int; $2
/* [000000E8] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$4.dst}           // ALU pipe: float; $4
/* [000000F8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x4A4E1F7 // $2
/* [00000108] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [00000110] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$5.dst}           // ALU pipe: float; $4
/* [00000120] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x4298DE9 // $2
/* [00000130] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000138] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$6.dst}           // ALU pipe: float; $4

// Line 23:  acc += x[i] * w[i];
/* [00000148] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x4986619 // $3
/* [00000158] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000168] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$7.dst}           // ALU pipe: float; $4
/* [00000178] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$8}           // ex_desc:0x0; desc:0x410E7AB // $3
/* [00000188] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000190] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$8.dst}           // ALU pipe: float; $4
/* [000001A0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$9}           // ex_desc:0x0; desc:0x4F74513 // $3
/* [000001B0] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [000001C0] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000001D0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$9.dst}           // ALU pipe: float; $4
/* [000001E0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$10}          // ex_desc:0x0; desc:0x4B4514F // $3
/* [000001F0] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000200] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000210] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$10.dst}          // ALU pipe: float; $4
/* [00000220] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$11}          // ex_desc:0x0; desc:0x4D6B7BB // $3
/* [00000230] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000240] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$11.dst}          // ALU pipe: float; $4
/* [00000250] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$12}          // ex_desc:0x0; desc:0x42D2349 // $3
/* [00000260] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000268] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$12.dst}          // ALU pipe: float; $4
/* [00000278] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$13}          // ex_desc:0x0; desc:0x472E5EC // $3
/* [00000288] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000298] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000002A8] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$13.dst}          // ALU pipe: float; $4

// Line 24:  out[gid] = acc;
/* [000002B8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$14}          // ex_desc:0x0; desc:0x46D09C2 // $4
/* [000002C8] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [000002D8] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000002E8] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$14.dst}          // ALU pipe: float; $4
/* [000002F8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$15}          // ex_desc:0x0; desc:0x48FE22A // $4
/* [00000308] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000310] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000320] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$15.dst}          // ALU pipe: float; $4
/* [00000330] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$0}           // ex_desc:0x0; desc:0x47C13F3 // $4
/* [00000340] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000350] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000360] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$0.dst}           // ALU pipe: float; $4

// Line 25:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000370] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$1}           // ex_desc:0x0; desc:0x4A80C00 // $5
/* [00000380] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000390] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000003A0] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$1.dst}           // ALU pipe: float; $4
/* [000003B0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x408A87B // $5
/* [000003C0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {Compacted}        // ALU pipe: int; $2
/* [000003C8] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$2.dst}           // ALU pipe: float; $4
/* [000003D8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x4E8D804 // $5
/* [000003E8] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [000003F0] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000400] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$3.dst}           // ALU pipe: float; $4
/* [00000410] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x4B5DEBF // $5
/* [00000420] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000430] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [00000440] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$4.dst}           // ALU pipe: float; $4
/* [00000450] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x43F0638 // $5
/* [00000460] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000470] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$5.dst}           // ALU pipe: float; $4
/* [00000480] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x42DEA1A // $5
/* [00000490] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [000004A0] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000004B0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$6.dst}           // ALU pipe: float; $4
/* [000004C0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x41DE8C8 // $5
/* [000004D0] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [000004E0] */         dpas.8x8 (16|M0)         r40:f         null:f            r16:bf            r24.0:bf{Atomic}           // XMX pipe
/* [000004F0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$7.dst}           // ALU pipe: float; $4
/* [00000500] */         cmp (32|M0)   (lt)f0.0   null<1>:d     r20.0<1;1,0>:d    r3.2<0;1,0>:d        {I@1}              // ALU pipe: int; $5
/* [00000510] */ (W&f0.0)jmpi                     _L_k0_0_                                                                // ALU pipe: int; $5
// B004: Preds:{B002, B003},  Succs:{}

// Line 26:  c[i] = a[i] + b[i];
/* [00000520] */         store.ugm.d32.a64 (32|M0)[r26:4]       r24:2                                  {A@1,$8}           // ex_desc:0x0; desc:0x4000584
/* [00000530] */ (W)     sync.allrd ($8)          null                                                                    // 
/* [00000540] */ (W)     send.gtwy (1|M0)         null     r127    null:0  0x0  0x02000010             {EOT,A@1}          // wr:1+0, rd:0; end of thread
