//.kernel _ZTSZ4mainEUlT_E2_
//.platform PVCXT
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.instCount 88
//.RA type	GRAPH_COLORING_FF_BC_RA
//.simd 16

// B000: Preds:{},  Succs:{B001}
per_thread_prolog:
/* [00000000] */ (W)     mov (16|M0)              r127.0<1>:ud  0x0:ud                                 {A@1}              // ALU pipe: int; $1
/* [00000010] */ (W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                           // ALU pipe: int; $1
/* [00000020] */         load.ugm.d32.a64 (32|M0) r1:2         [r3:4]                                  {I@1,$0}           // ex_desc:0x0; desc:0x4182672 // $0
/* [00000030] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000040] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$0.src}           // ALU pipe: float; $4
/* [00000050] */         load.ugm.d32.a64 (32|M0) r2:2         [r4:4]                                  {I@1,$1}           // ex_desc:0x0; desc:0x497CC74 // $0
// B002: Preds:{B001},  Succs:{B003, B004}
// _main:

// File: /home/user/work/bench/src/kernels.cpp

// Line 21:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000060] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$1.dst}           // ALU pipe: float; $4
/* [00000070] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {Compacted}        // ALU pipe: int; $2
/* [00000078] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000088] */         load.ugm.d32.a64 (32|M0) r12:2         [r14:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x40A3AEC // $1
// B003: Preds:{B002, B003},  Succs:{B003, B004}

// Line 22:  c[i] = a[i] + b[i];
/* [00000098] */         sync.nop                 null                                                 {Compacted,$2.dst} // $4
/* [000000A0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x4D6061F // $2
/* [000000B0] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [000000C0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$3.dst}           // ALU pipe: float; $4
/* [000000D0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x48D5B35 // $2
/* [000000E0] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [000000F0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$4.dst}           // ALU pipe: float; $4
/* [00000100] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x43C951E // $2
/* [00000110] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000120] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$5.dst}           // ALU pipe: float; $4
/* [00000130] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x456EFAB // $2
/* [00000140] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000150] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$6.dst}           // ALU pipe: float; $4

// Line 23:  acc += x[i] * w[i];
/* [00000160] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x4C6BC6D // $3
/* [00000170] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [00000178] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$7.dst}           // ALU pipe: float; $4
/* [00000188] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$8}           // ex_desc:0x0; desc:0x45C6059 // $3
/* [00000198] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [000001A0] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$8.dst}           // ALU pipe: float; $4
/* [000001B0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$9}           // ex_desc:0x0; desc:0x440A0CF // $3
/* [000001C0] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [000001C8] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$9.dst}           // ALU pipe: float; $4
/* [000001D8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$10}          // ex_desc:0x0; desc:0x4001741 // $3
/* [000001E8] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [000001F0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$10.dst}          // ALU pipe: float; $4

// Line 24:  out[gid] = acc;
/* [00000200] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$11}          // ex_desc:0x0; desc:0x4B3EFCC // $4
/* [00000210] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {Compacted}        // ALU pipe: int; $2
/* [00000218] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$11.dst}          // ALU pipe: float; $4
/* [00000228] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$12}          // ex_desc:0x0; desc:0x4C2554E // $4
/* [00000238] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000248] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$12.dst}          // ALU pipe: float; $4
/* [00000258] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$13}          // ex_desc:0x0; desc:0x4046A89 // $4
/* [00000268] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000278] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$13.dst}          // ALU pipe: float; $4
/* [00000288] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$14}          // ex_desc:0x0; desc:0x485064F // $4
/* [00000298] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [000002A8] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$14.dst}          // ALU pipe: float; $4

// Line 25:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [000002B8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$15}          // ex_desc:0x0; desc:0x41A8220 // $5
/* [000002C8] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {Compacted}        // ALU pipe: int; $2
/* [000002D0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$15.dst}          // ALU pipe: float; $4
/* [000002E0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$0}           // ex_desc:0x0; desc:0x4202115 // $5
/* [000002F0] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000300] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$0.dst}           // ALU pipe: float; $4
/* [00000310] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$1}           // ex_desc:0x0; desc:0x4B6208D // $5
/* [00000320] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000330] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$1.dst}           // ALU pipe: float; $4
/* [00000340] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x46A3444 // $5
/* [00000350] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [00000358] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$2.dst}           // ALU pipe: float; $4

// Line 26:  c[i] = a[i] + b[i];
/* [00000368] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x4FBA54C // $6
/* [00000378] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {Compacted}        // ALU pipe: int; $2
/* [00000380] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$3.dst}           // ALU pipe: float; $4
/* [00000390] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x4E31B6C // $6
/* [000003A0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {I@1}              // ALU pipe: int; $2
/* [000003B0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$4.dst}           // ALU pipe: float; $4
/* [000003C0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x4F9AC8A // $6
/* [000003D0] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [000003E0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$5.dst}           // ALU pipe: float; $4
/* [000003F0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x46E3C8F // $6
/* [00000400] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000410] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$6.dst}           // ALU pipe: float; $4

// Line 27:  acc += x[i] * w[i];
/* [00000420] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x40240F8 // $7
/* [00000430] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000440] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$7.dst}           // ALU pipe: float; $4
/* [00000450] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$8}           // ex_desc:0x0; desc:0x4A9932A // $7
/* [00000460] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000468] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$8.dst}           // ALU pipe: float; $4
/* [00000478] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$9}           // ex_desc:0x0; desc:0x4D72AD5 // $7
/* [00000488] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000490] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$9.dst}           // ALU pipe: float; $4
/* [000004A0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$10}          // ex_desc:0x0; desc:0x45E0214 // $7
/* [000004B0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {I@1}              // ALU pipe: int; $2
/* [000004C0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$10.dst}          // ALU pipe: float; $4
/* [000004D0] */         cmp (32|M0)   (lt)f0.0   null<1>:d     r20.0<1;1,0>:d    r3.2<0;1,0>:d        {I@1}              // ALU pipe: int; $5
/* [000004E0] */ (W&f0.0)jmpi                     _L_k0_0_                                                                // ALU pipe: int; $5
// B004: Preds:{B002, B003},  Succs:{}

// Line 28:  out[gid] = acc;
/* [000004F0] */         store.ugm.d32.a64 (32|M0)[r26:4]       r24:2                                  {A@1,$11}          // ex_desc:0x0; desc:0x4000584
/* [00000500] */ (W)     sync.allrd ($11)         null                                                                    // 
/* [00000510] */ (W)     send.gtwy (1|M0)         null     r127    null:0  0x0  0x02000010             {EOT,A@1}          // wr:1+0, rd:0; end of thread
