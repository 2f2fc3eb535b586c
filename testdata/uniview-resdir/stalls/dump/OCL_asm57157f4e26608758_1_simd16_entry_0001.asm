//.kernel triton_poi_fused_add_0
//.platform PVCXT
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.full_options "-emitLocation -enableCoalesceScalarMoves -hasRNEandDenorm -noStitchExternFunc -linker 63 -preserver0 -abortOnSpill 4 -enableBCR -boundsChecking -presched-rp 100 -nodpsendreorder -SBIDDepLoc -output -binary -dumpcommonisa -dumpcombinedcisa -dumpvisa -printHexFloatInAsm -noDPASMacro -noStitchExternFunc -linker 63 -abiver 2 -LSCFenceWA"
//.instCount 52
//.RA type	GRAPH_COLORING_FF_BC_RA
//.git-hash 
//.GRF count 37
//.spill size 0
//.spill GRF est. ref count 0

//.declare BuiltinA0 (0)  rf=a size=4 type=ud align=1 words (a0.0) IsBuiltin
//.declare BuiltinA0Dot2 (1)  rf=a size=4 type=ud align=1 words (a0.2) IsBuiltin
//.declare %null (9)  rf=r size=4 type=ud align=2 words
//.declare %local_id_x (12)  rf=r size=4 type=ud align=2 words (r1.1)
//.declare %local_size_x (15)  rf=r size=4 type=ud align=2 words (r1.0)
//.declare %group_id_x (18)  rf=r size=4 type=ud align=2 words (r0.1)
//.declare %tsc (24)  rf=r size=20 type=ud align=2 words
//.declare %arg (25)  rf=r size=0 type=ud align=32 words (r26.0)
//.declare %retval (26)  rf=r size=0 type=ud align=32 words (r26.0) Output
//.declare %sp (27)  rf=r size=8 type=uq align=4 words (r127.3)
//.declare %fp (28)  rf=r size=8 type=uq align=4 words (r127.2)
//.declare %sr0 (29)  rf=r size=16 type=ud align=2 words
//.declare %cr0 (30)  rf=r size=12 type=ud align=2 words
//.declare %ce0 (31)  rf=r size=4 type=ud align=2 words
//.declare %dbg0 (32)  rf=r size=8 type=ud align=2 words

// .inputs
// +----------+----------+--------+----------+------------------+
// | id       | type     |  bytes | at       | from             |
// +----------+----------+--------+----------+------------------+
// | V0033    | :w x 16  |   0x20 | r1       | pti[tid]+0x0     |
// | V0034    | :d x 3   |    0xC | r2       | cti+0x0          |
// | V0035    | :uq      |    0x8 | r2+0x10  | cti+0x10         |
// | V0036    | :uq      |    0x8 | r2+0x18  | cti+0x18         |
// | V0037    | :uq      |    0x8 | r2+0x20  | cti+0x20         |
// | V0038    | :q       |    0x8 | r3       | cti+0x40         |
// +----------+----------+--------+----------+------------------+


// B000: Preds:{},  Succs:{B001}
per_thread_prolog:
/* [00000000] */ (W)     mov (16|M0)              r127.0<1>:ud  0x0:ud                                 {A@1}              //  ALU pipe: int; $1
/* [00000010] */ (W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                           //  ALU pipe: int; $1
/* [00000020] */ (W)     and (1|M0)               r127.0<1>:uw  r0.4<0;1,0>:uw    0xFF:uw                                 //  ALU pipe: int; $1
/* [00000030] */ (W)     add (1|M0)               r127.2<1>:ud  r127.2<0;1,0>:ud  0x80:ud              {I@2}              //  ALU pipe: int; $1
/* [00000040] */ (W)     mad (1|M0)               r127.0<1>:ud  r127.2<0;0>:ud    r127.0<0;0>:uw   0x40:uw {I@1}          //  ALU pipe: int; $1
/* [00000050] */ (W)     load.ugm.d32x16t.a32.ca.cc (1|M0) r1:1          bti[255][r127:1]              {A@1,$0} // ex_desc:0x0; desc:0x40D8D5C // $1
/* [00000060] */         nop                                                                                              // 
/* [00000070] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000080] */ (W)     and (1|M0)               r127.0<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {$0.src}           //  ALU pipe: int; $1
/* [00000090] */ (W)     load.ugm.d32x32t.a32.ca.cc (1|M0) r2:2          bti[255][r127:1]              {A@1,$1} // ex_desc:0x0; desc:0x4F9B4E4 // $1
// B002: Preds:{B001},  Succs:{B003, B004}
// _main:

// Line 21:  xoffset = tl.program_id(0) * XBLOCK
/* [000000A0] */ (W)     mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                                            //  ALU pipe: int; $2
/* [000000B0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {A@1,$1.dst}       //  ALU pipe: int; $2
/* [000000C0] */         add (32|M0)              r6.0<1>:d     r4.0<1;1,0>:d     r0.1<0;1,0>:d        {Compacted,I@1}    //  ALU pipe: int; $2
/* [000000C8] */         mov (32|M0)              r8.0<1>:q     r6.0<1;1,0>:d                          {I@1}              //  ALU pipe: int; $2

// Line 22:  xindex = xoffset + tl.arange(0, XBLOCK)[:]
/* [000000D8] */         add (32|M0)              r10.0<1>:d    r6.0<1;1,0>:d     r1.0<1;1,0>:uw       {I@1}              //  ALU pipe: int; $3

// Line 23:  xmask = xindex < xnumel
/* [000000E8] */         cmp (32|M0)              (lt)f0.0   null<1>:d r10.0<1;1,0>:d    r3.2<0;1,0>:d {I@1}              //  ALU pipe: int; $4
/* [000000F8] */ (W)     load.ugm.d32x8t.a64.ca.ca (1|M0) r9:1          [r2.2:1]                       {I@1,$2} // ex_desc:0x0; desc:0x47EEA84 // $4
/* [00000108] */ (W&~f0.0) jmpi                   _L_exit                                                                 //  ALU pipe: int; $4
// B003: Preds:{B002, B003},  Succs:{B003, B004}
_L_k0_0_:

// Line 25:  tmp0 = tl.load(in_ptr0 + (x0), xmask)
/* [00000118] */         shl (32|M0)              r10.0<1>:q    r8.0<1;1,0>:q     2:w                  {I@1,$2.dst}       //  ALU pipe: int; $5
/* [00000128] */         add (32|M0)              r12.0<1>:q    r10.0<1;1,0>:q    r2.4<0;1,0>:q        {I@1}              //  ALU pipe: int; $5
/* [00000138] */ (f0.0)  load.ugm.d32.a64 (32|M0) r14:2         [r12:4]                                {I@1,$3} // ex_desc:0x0; desc:0x49462A0 // $5

// Line 26:  tmp1 = tl.load(in_ptr1 + (x0), xmask)
/* [00000148] */         add (32|M0)              r16.0<1>:q    r10.0<1;1,0>:q    r2.6<0;1,0>:q        {I@2}              //  ALU pipe: int; $6
/* [00000158] */ (f0.0)  load.ugm.d32.a64 (32|M0) r18:2         [r16:4]                                {I@1,$4} // ex_desc:0x0; desc:0x45443CC // $6
/* [00000168] */         add (32|M0)              r20.0<1>:q    r10.0<1;1,0>:q    r3.0<0;1,0>:q        {I@3}              //  ALU pipe: int; $6

// Line 27:  tmp2 = tmp0 + tmp1
/* [00000178] */         sync.nop                 null                                                 {Compacted,$3.dst} // $7
/* [00000180] */         add (32|M0)              r22.0<1>:f    r14.0<1;1,0>:f    r18.0<1;1,0>:f       {$4.dst}           //  ALU pipe: float; $7

// Line 28:  tl.store(out_ptr0 + (x0), tmp2, xmask)
/* [00000190] */ (f0.0)  store.ugm.d32.a64 (32|M0) [r20:4]       r22:2                                 {A@1,$5} // ex_desc:0x0; desc:0x402FCD4 // $8
/* [000001A0] */         add (32|M0)              r8.0<1>:q     r8.0<1;1,0>:q     r3.2<0;1,0>:d                           //  ALU pipe: int; $8

// Line 25:  tmp0 = tl.load(in_ptr0 + (x0), xmask)
/* [000001B0] */         shl (32|M0)              r24.0<1>:q    r8.0<1;1,0>:q     2:w                                     //  ALU pipe: int; $9
/* [000001C0] */         add (32|M0)              r26.0<1>:q    r24.0<1;1,0>:q    r2.4<0;1,0>:q        {I@1}              //  ALU pipe: int; $9
/* [000001D0] */ (f0.0)  load.ugm.d32.a64 (32|M0) r28:2         [r26:4]                                {I@1,$6} // ex_desc:0x0; desc:0x4AE69F8 // $9

// Line 26:  tmp1 = tl.load(in_ptr1 + (x0), xmask)
/* [000001E0] */         add (32|M0)              r30.0<1>:q    r24.0<1;1,0>:q    r2.6<0;1,0>:q        {I@2}              //  ALU pipe: int; $10
/* [000001F0] */ (f0.0)  load.ugm.d32.a64 (32|M0) r32:2         [r30:4]                                {I@1,$7} // ex_desc:0x0; desc:0x464353C // $10
/* [00000200] */         add (32|M0)              r34.0<1>:q    r24.0<1;1,0>:q    r3.0<0;1,0>:q        {I@3}              //  ALU pipe: int; $10

// Line 27:  tmp2 = tmp0 + tmp1
/* [00000210] */         mov (32|M0)              r37.0<1>:f    r28.0<1;1,0>:f                         {$6.dst}           //  ALU pipe: float; $11
/* [00000220] */         add (32|M0)              r36.0<1>:f    r37.0<1;1,0>:f    r32.0<1;1,0>:f       {F@1,$7.dst}       //  ALU pipe: float; $11

// Line 28:  tl.store(out_ptr0 + (x0), tmp2, xmask)
/* [00000230] */ (f0.0)  store.ugm.d32.a64 (32|M0) [r34:4]       r36:2                                 {A@1,$8} // ex_desc:0x0; desc:0x44629EC // $12
/* [00000240] */         add (32|M0)              r8.0<1>:q     r8.0<1;1,0>:q     r3.2<0;1,0>:d        {I@3}              //  ALU pipe: int; $12

// Line 25:  tmp0 = tl.load(in_ptr0 + (x0), xmask)
/* [00000250] */         shl (32|M0)              r38.0<1>:q    r8.0<1;1,0>:q     2:w                                     //  ALU pipe: int; $13
/* [00000260] */         add (32|M0)              r40.0<1>:q    r38.0<1;1,0>:q    r2.4<0;1,0>:q        {I@1}              //  ALU pipe: int; $13
/* [00000270] */ (f0.0)  load.ugm.d32.a64 (32|M0) r42:2         [r40:4]                                {I@1,$9} // ex_desc:0x0; desc:0x4C1EAE0 // $13

// Line 26:  tmp1 = tl.load(in_ptr1 + (x0), xmask)
/* [00000280] */         add (32|M0)              r44.0<1>:q    r38.0<1;1,0>:q    r2.6<0;1,0>:q        {I@2}              //  ALU pipe: int; $14
/* [00000290] */ (f0.0)  load.ugm.d32.a64 (32|M0) r46:2         [r44:4]                                {I@1,$10} // ex_desc:0x0; desc:0x4569280 // $14
/* [000002A0] */         add (32|M0)              r48.0<1>:q    r38.0<1;1,0>:q    r3.0<0;1,0>:q        {I@3}              //  ALU pipe: int; $14

// Line 27:  tmp2 = tmp0 + tmp1
/* [000002B0] */         sync.nop                 null                                                 {Compacted,$9.dst} // $15
/* [000002B8] */         add (32|M0)              r50.0<1>:f    r42.0<1;1,0>:f    r46.0<1;1,0>:f       {$10.dst}          //  ALU pipe: float; $15

// Line 28:  tl.store(out_ptr0 + (x0), tmp2, xmask)
/* [000002C8] */ (f0.0)  store.ugm.d32.a64 (32|M0) [r48:4]       r50:2                                 {A@1,$11} // ex_desc:0x0; desc:0x40F896C // $16
/* [000002D8] */         add (32|M0)              r8.0<1>:q     r8.0<1;1,0>:q     r3.2<0;1,0>:d        {I@3}              //  ALU pipe: int; $16

// Line 37:  xmask = xindex < xnumel
/* [000002E8] */         cmp (32|M0)              (lt)f0.0   null<1>:uq r8.0<1;1,0>:uq    r3.0<0;1,0>:uq {I@1}            //  ALU pipe: int; $17
/* [000002F8] */ (W&f0.0) jmpi                    _L_k0_0_                                                                //  ALU pipe: int; $17
// B004: Preds:{B002, B003},  Succs:{}
_L_exit:

// Line 40:  }
/* [00000308] */ (W)     mov (16|M0)              r112.0<1>:f   r0.0<1;1,0>:f                          {Compacted}        //  ALU pipe: int; $18
/* [00000310] */ (W)     send.gtwy (1|M0)         null          r112              null:0           0x0              0x02000010 {EOT,A@1} // wr:1+0, rd:0; end of thread // $18

