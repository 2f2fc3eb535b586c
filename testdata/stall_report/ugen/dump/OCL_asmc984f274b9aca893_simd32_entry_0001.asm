//.kernel triton_poi_fused_add_0
//.platform PVCXT
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.instCount 88
//.RA type	GRAPH_COLORING_FF_BC_RA
//.simd 32

// B000: Preds:{},  Succs:{B001}
per_thread_prolog:
/* [00000000] */ (W)     mov (16|M0)              r127.0<1>:ud  0x0:ud                                 {A@1}              // ALU pipe: int; $1
/* [00000010] */ (W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                           // ALU pipe: int; $1
/* [00000020] */         load.ugm.d32.a64 (32|M0) r1:2         [r3:4]                                  {I@1,$0}           // ex_desc:0x0; desc:0x4B5CD2C // $0
/* [00000030] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000040] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$0.src}           // ALU pipe: float; $4
/* [00000050] */         load.ugm.d32.a64 (32|M0) r2:2         [r4:4]                                  {I@1,$1}           // ex_desc:0x0; desc:0x44ABCD4 // $0
// B002: Preds:{B001},  Succs:{B003, B004}
// _main:

// Line 21:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [00000060] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$1.dst}           // ALU pipe: float; $4
/* [00000070] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [00000080] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000090] */         load.ugm.d32.a64 (32|M0) r12:2         [r14:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x4A05DAD // $1
// B003: Preds:{B002, B003},  Succs:{B003, B004}

// Line 22:  c[i] = a[i] + b[i];
/* [000000A0] */         sync.nop                 null                                                 {Compacted,$2.dst} // $4
/* [000000A8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x4002697 // $2
/* [000000B8] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [000000C8] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$3.dst}           // ALU pipe: float; $4
/* [000000D8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x46CFDB3 // $2
/* [000000E8] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [000000F8] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$4.dst}           // ALU pipe: float; $4
/* [00000108] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x4DF7ED7 // $2
/* [00000118] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000128] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$5.dst}           // ALU pipe: float; $4
/* [00000138] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x4188D17 // $2
/* [00000148] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000158] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$6.dst}           // ALU pipe: float; $4

// Line 23:  acc += x[i] * w[i];
/* [00000168] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x42B24C0 // $3
/* [00000178] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000180] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$7.dst}           // ALU pipe: float; $4
/* [00000190] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$8}           // ex_desc:0x0; desc:0x4ECFBFB // $3
/* [000001A0] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [000001B0] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$8.dst}           // ALU pipe: float; $4
/* [000001C0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$9}           // ex_desc:0x0; desc:0x41D78ED // $3
/* [000001D0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {I@1}              // ALU pipe: int; $2
/* [000001E0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$9.dst}           // ALU pipe: float; $4
/* [000001F0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$10}          // ex_desc:0x0; desc:0x4AA616B // $3
/* [00000200] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [00000208] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$10.dst}          // ALU pipe: float; $4

// Line 24:  out[gid] = acc;
/* [00000218] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$11}          // ex_desc:0x0; desc:0x4440A88 // $4
/* [00000228] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [00000230] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$11.dst}          // ALU pipe: float; $4
/* [00000240] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$12}          // ex_desc:0x0; desc:0x4B8B4E8 // $4
/* [00000250] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000260] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$12.dst}          // ALU pipe: float; $4
/* [00000270] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$13}          // ex_desc:0x0; desc:0x4B1AAD1 // $4
/* [00000280] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000290] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$13.dst}          // ALU pipe: float; $4
/* [000002A0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$14}          // ex_desc:0x0; desc:0x4BFCFE0 // $4
/* [000002B0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {Compacted}        // ALU pipe: int; $2
/* [000002B8] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$14.dst}          // ALU pipe: float; $4

// Line 25:  for (size_t i = it.get_global_id(0); i < n; i += stride) {
/* [000002C8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$15}          // ex_desc:0x0; desc:0x4F223B2 // $5
/* [000002D8] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [000002E0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$15.dst}          // ALU pipe: float; $4
/* [000002F0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$0}           // ex_desc:0x0; desc:0x49D7AF5 // $5
/* [00000300] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {Compacted}        // ALU pipe: int; $2
/* [00000308] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$0.dst}           // ALU pipe: float; $4
/* [00000318] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$1}           // ex_desc:0x0; desc:0x478760A // $5
/* [00000328] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1}              // ALU pipe: int; $2
/* [00000338] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$1.dst}           // ALU pipe: float; $4
/* [00000348] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$2}           // ex_desc:0x0; desc:0x45A84DD // $5
/* [00000358] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000368] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$2.dst}           // ALU pipe: float; $4

// Line 26:  c[i] = a[i] + b[i];
/* [00000378] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$3}           // ex_desc:0x0; desc:0x4E63723 // $6
/* [00000388] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000398] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$3.dst}           // ALU pipe: float; $4
/* [000003A8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$4}           // ex_desc:0x0; desc:0x4269F1F // $6
/* [000003B8] */         mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                         {I@1}              // ALU pipe: int; $2
/* [000003C8] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$4.dst}           // ALU pipe: float; $4
/* [000003D8] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$5}           // ex_desc:0x0; desc:0x47363A0 // $6
/* [000003E8] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [000003F0] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$5.dst}           // ALU pipe: float; $4
/* [00000400] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$6}           // ex_desc:0x0; desc:0x48922B0 // $6
/* [00000410] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000420] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$6.dst}           // ALU pipe: float; $4

// Line 27:  acc += x[i] * w[i];
/* [00000430] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$7}           // ex_desc:0x0; desc:0x4F260DA // $7
/* [00000440] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@1}              // ALU pipe: int; $2
/* [00000450] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$7.dst}           // ALU pipe: float; $4
/* [00000460] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$8}           // ex_desc:0x0; desc:0x4F57D3B // $7
/* [00000470] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {Compacted}        // ALU pipe: int; $2
/* [00000478] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {$8.dst}           // ALU pipe: float; $4
/* [00000488] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$9}           // ex_desc:0x0; desc:0x46EBA4C // $7
/* [00000498] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {Compacted}        // ALU pipe: int; $2
/* [000004A0] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$9.dst}           // ALU pipe: float; $4
/* [000004B0] */         load.ugm.d32.a64 (32|M0) r14:2         [r16:4]                                {I@1,$10}          // ex_desc:0x0; desc:0x49E31CC // $7
/* [000004C0] */         and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {I@1}              // ALU pipe: int; $2
/* [000004D0] */         mad (32|M0)              r24.0<1>:f    r22.0<1;0>:f      r14.0<1;0>:f      r18.0<1;0>:f{$10.dst}          // ALU pipe: float; $4
/* [000004E0] */         cmp (32|M0)   (lt)f0.0   null<1>:d     r20.0<1;1,0>:d    r3.2<0;1,0>:d        {I@1}              // ALU pipe: int; $5
/* [000004F0] */ (W&f0.0)jmpi                     _L_k0_0_                                                                // ALU pipe: int; $5
// B004: Preds:{B002, B003},  Succs:{}

// Line 28:  out[gid] = acc;
/* [00000500] */         store.ugm.d32.a64 (32|M0)[r26:4]       r24:2                                  {A@1,$11}          // ex_desc:0x0; desc:0x4000584
/* [00000510] */ (W)     sync.allrd ($11)         null                                                                    // 
/* [00000520] */ (W)     send.gtwy (1|M0)         null     r127    null:0  0x0  0x02000010             {EOT,A@1}          // wr:1+0, rd:0; end of thread
