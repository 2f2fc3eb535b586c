//.kernel _ZTSN3xpu5xetla12hgemm_callerIN4sycl3_V13ext6oneapi8bfloat16ELi256ELi256ELi32ELi64ELi32ELi1ELb1ELb0EEE
//.platform PVCXT
//.thread_config numGRF=256, numAcc=8, numSWSB=32
//.options_string "-enableHalfLSC -hasNoInt64Add "
//.full_options "-emitLocation -enableCoalesceScalarMoves -hasRNEandDenorm -noStitchExternFunc -linker 63 -preserver0 -abortOnSpill 4 -enableBCR -boundsChecking -presched-rp 100 -nodpsendreorder -SBIDDepLoc -output -binary -dumpcommonisa -dumpcombinedcisa -dumpvisa -printHexFloatInAsm -noDPASMacro -noStitchExternFunc -linker 63 -abiver 2 -LSCFenceWA -TotalGRFNum 256"
//.instCount 39
//.RA type	GRAPH_COLORING_FF_BC_RA
//.git-hash 
//.GRF count 33
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
//.declare %sp (27)  rf=r size=8 type=uq align=4 words (r255.3)
//.declare %fp (28)  rf=r size=8 type=uq align=4 words (r255.2)
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
/* [00000030] */ (W)     add (1|M0)               r127.2<1>:ud  r127.2<0;1,0>:ud  0x100:ud             {I@2}              //  ALU pipe: int; $1
/* [00000040] */ (W)     mad (1|M0)               r127.0<1>:ud  r127.2<0;0>:ud    r127.0<0;0>:uw   0x40:uw {I@1}          //  ALU pipe: int; $1
/* [00000050] */ (W)     load.ugm.d32x16t.a32.ca.cc (1|M0) r1:1          bti[255][r127:1]              {A@1,$0} // ex_desc:0x0; desc:0x46F7730 // $1
/* [00000060] */         nop                                                                                              // 
/* [00000070] */         nop                                                                                              // 
// B001: Preds:{B000},  Succs:{B002}
// cross_thread_prolog:
/* [00000080] */ (W)     and (1|M0)               r127.0<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud        {$0.src}           //  ALU pipe: int; $1
/* [00000090] */ (W)     load.ugm.d32x32t.a32.ca.cc (1|M0) r2:2          bti[255][r127:1]              {A@1,$1} // ex_desc:0x0; desc:0x44682D8 // $1
// B002: Preds:{B001},  Succs:{B003}
// _main:

// File: /opt/intel/oneapi/compiler/2025.1/bin/compiler/../../include/sycl/detail/item_base.hpp

// Line 142:  return item.get_group(Dim);
/* [000000A0] */ (W)     mov (16|M0)              r8.0<1>:ud    r0.0<1;1,0>:ud                                            //  ALU pipe: int; $2
/* [000000B0] */         mul (32|M0)              r4.0<1>:d     r2.0<0;1,0>:d     r1.0<1;1,0>:uw       {A@1,$1.dst}       //  ALU pipe: int; $2
/* [000000C0] */         add (32|M0)              r6.0<1>:d     r4.0<1;1,0>:d     r0.1<0;1,0>:d        {Compacted,I@1}    //  ALU pipe: int; $2
/* [000000C8] */         mov (32|M0)              r8.0<1>:q     r6.0<1;1,0>:d                          {I@1}              //  ALU pipe: int; $2

// File: /home/user/work/xetla/include/kernel/gemm/impl/default_xe.hpp

// Line 120:  xetla_tdescriptor a_desc = make_desc(A, lda, m0, k0);
/* [000000D8] */ (W)     mov (1|M0)               r20.2<1>:ud   r2.4<0;1,0>:ud                                            //  ALU pipe: int; $3
/* [000000E8] */ (W)     mov (1|M0)               r21.2<1>:ud   r2.6<0;1,0>:ud                         {I@1}              //  ALU pipe: int; $3

// Line 122:  a = xetla_load_global<bf16, 32, 32>(a_desc);
/* [000000F8] */ (W)     load_block2d.ugm.d16.a64 (1|M0) r40:8         [r20:1]                         {I@1,$2} // ex_desc:0x0; desc:0x4C43A70 // $4

// Line 123:  b = xetla_load_global<bf16, 32, 32, vnni>(b_desc);
/* [00000108] */ (W)     load_block2d.ugm.d16v.a64 (1|M0) r48:16        [r21:1]                        {I@1,$3} // ex_desc:0x0; desc:0x433198C // $5

// Line 121:  acc = 0;
/* [00000118] */         mov (16|M0)              r64.0<1>:f    0x0:f                                  {Compacted}        //  ALU pipe: float; $6
/* [00000120] */         mov (16|M0)              r66.0<1>:f    0x0:f                                  {Compacted}        //  ALU pipe: float; $6
/* [00000128] */         mov (16|M0)              r68.0<1>:f    0x0:f                                  {Compacted}        //  ALU pipe: float; $6
/* [00000130] */         mov (16|M0)              r70.0<1>:f    0x0:f                                  {Compacted}        //  ALU pipe: float; $6
// B003: Preds:{B002, B003},  Succs:{B003, B004}
_L_k0_0_:

// Line 126:  acc = xetla_mma<8, 16>(acc, a, b);
/* [00000138] */         sync.nop                 null                                                 {Compacted,$2.dst} // $7
/* [00000140] */         dpas.8x8 (16|M0)         r64:f         r64:f             r48:bf           r40.0:bf {Atomic,$3.dst} //  ALU pipe: xmx; $7
/* [00000150] */         dpas.8x8 (16|M0)         r66:f         r66:f             r52:bf           r42.0:bf {Atomic}      //  ALU pipe: xmx; $7
/* [00000160] */         dpas.8x8 (16|M0)         r68:f         r68:f             r56:bf           r44.0:bf {Atomic}      //  ALU pipe: xmx; $7
/* [00000170] */         dpas.8x8 (16|M0)         r70:f         r70:f             r60:bf           r46.0:bf {Atomic,$4}   //  ALU pipe: xmx; $7

// Line 124:  a_desc.update(0, 32); b_desc.update(32, 0);
/* [00000180] */ (W)     add (1|M0)               r20.5<1>:d    r20.5<0;1,0>:d    32:w                 {$4.src}           //  ALU pipe: int; $8
/* [00000190] */ (W)     add (1|M0)               r21.6<1>:d    r21.6<0;1,0>:d    32:w                                    //  ALU pipe: int; $8

// Line 122:  a = xetla_load_global<bf16, 32, 32>(a_desc);
/* [000001A0] */ (W)     load_block2d.ugm.d16.a64 (1|M0) r40:8         [r20:1]                         {I@2,$2} // ex_desc:0x0; desc:0x4DA286C // $9

// Line 123:  b = xetla_load_global<bf16, 32, 32, vnni>(b_desc);
/* [000001B0] */ (W)     load_block2d.ugm.d16v.a64 (1|M0) r48:16        [r21:1]                        {I@2,$3} // ex_desc:0x0; desc:0x4ED5788 // $10

// Line 125:  for (int k = 0; k < K; k += 32) {
/* [000001C0] */ (W)     add (1|M0)               r9.0<1>:d     r9.0<0;1,0>:d     32:w                 {Compacted}        //  ALU pipe: int; $11
/* [000001C8] */ (W)     cmp (1|M0)               (lt)f0.0   null<1>:d r9.0<0;1,0>:d     r3.1<0;1,0>:d {I@1}              //  ALU pipe: int; $11
/* [000001D8] */ (W&f0.0) jmpi                    _L_k0_0_                                                                //  ALU pipe: int; $11
// B004: Preds:{B003},  Succs:{}
BB_1:

// Line 129:  xetla_store_global(c_desc, acc);
/* [000001E8] */         sync.nop                 null                                                 {Compacted,$4.dst} // $12
/* [000001F0] */ (W)     mov (1|M0)               r22.2<1>:ud   r2.8<0;1,0>:ud                                            //  ALU pipe: int; $12
/* [00000200] */ (W)     store_block2d.ugm.d32.a64 (1|M0) [r22:1]       r64:8                          {I@1,$5} // ex_desc:0x0; desc:0x47A7638 // $12
/* [00000210] */ (W)     mov (16|M0)              r112.0<1>:f   r0.0<1;1,0>:f                          {Compacted}        //  ALU pipe: int; $12
/* [00000218] */ (W)     send.gtwy (1|M0)         null          r112              null:0           0x0              0x02000010 {EOT,A@1} // wr:1+0, rd:0; end of thread // $12

